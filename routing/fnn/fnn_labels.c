/* fnn_labels.c - printable HTML wiring labels: one per PC, a colour patch per NIC. */
#include "fnn.h"

#include <errno.h>

/* Cable colours that stay apart on screen and paper; past them a second mark is added. */
static const struct {
	const char *css, *name, *ink;
} palette[] = {
	{ "#e6194b", "red", "#fff" },     { "#4363d8", "blue", "#fff" },
	{ "#3cb44b", "green", "#fff" },   { "#f58231", "orange", "#000" },
	{ "#911eb4", "purple", "#fff" },  { "#ffe119", "yellow", "#000" },
	{ "#42d4f4", "cyan", "#000" },    { "#f032e6", "magenta", "#fff" },
	{ "#9a6324", "brown", "#fff" },   { "#000000", "black", "#fff" },
	{ "#a9a9a9", "grey", "#000" },    { "#fabed4", "pink", "#000" },
};
#define NCOLOURS ((int)(sizeof(palette) / sizeof(palette[0])))

static const char *mark_name[] = { "solid", "double triangle", "striped", "dotted" };
#define NMARKS ((int)(sizeof(mark_name) / sizeof(mark_name[0])))

const char *fnn_switch_colour(int sw, const char **colour_name, int *mark)
{
	int c = sw % NCOLOURS;
	if (colour_name)
		*colour_name = palette[c].name;
	if (mark)
		*mark = sw / NCOLOURS;
	return palette[c].css;
}

/* The second mark drawn over the colour: none, two triangles, stripes, dots, or a count. */
static void mark_svg(FILE *out, int mark, const char *ink)
{
	switch (mark) {
	case 0:
		break;
	case 1:
		fprintf(out, "<polygon points='8,40 20,16 32,40' fill='none' stroke='%s' "
			"stroke-width='3'/><polygon points='28,40 40,16 52,40' fill='none' "
			"stroke='%s' stroke-width='3'/>", ink, ink);
		break;
	case 2:
		for (int x = -40; x < 60; x += 12)
			fprintf(out, "<line x1='%d' y1='60' x2='%d' y2='0' stroke='%s' "
				"stroke-width='3'/>", x, x + 60, ink);
		break;
	case 3:
		for (int y = 12; y < 60; y += 16)
			for (int x = 12; x < 60; x += 16)
				fprintf(out, "<circle cx='%d' cy='%d' r='3' fill='%s'/>", x, y, ink);
		break;
	default:
		fprintf(out, "<text x='30' y='40' font-size='22' text-anchor='middle' fill='%s'>"
			"&#215;%d</text>", ink, mark);
	}
}

static void patch(FILE *out, int sw, const char *caption)
{
	const char *name;
	int mark, c = sw % NCOLOURS;
	const char *css = fnn_switch_colour(sw, &name, &mark);
	fprintf(out, "<div class='nic' data-switch='%d'><svg width='60' height='60' "
		"viewBox='0 0 60 60'><rect x='1' y='1' width='58' height='58' fill='%s' "
		"stroke='#000' stroke-width='2'/>", sw, css);
	mark_svg(out, mark, palette[c].ink);
	fprintf(out, "</svg><div class='cap'>%s<br>switch %d<br>%s%s%s</div></div>", caption, sw,
		name, mark ? " " : "", mark ? (mark < NMARKS ? mark_name[mark] : "marked") : "");
}

int fnn_labels_html(const struct fnn_design *d, const char *prefix, FILE *out)
{
	fprintf(out, "<!DOCTYPE html>\n<html><head><meta charset='utf-8'>"
		"<title>FNN wiring labels</title>\n<style>\n"
		"body{font-family:sans-serif;margin:8px}\n"
		".labels{display:flex;flex-wrap:wrap;gap:6px}\n"
		".label{border:2px solid #000;padding:4px 6px;break-inside:avoid;"
		"page-break-inside:avoid}\n"
		".pc{font-size:20px;font-weight:bold}\n"
		".nics{display:flex;gap:4px}\n"
		".nic{text-align:center}\n"
		".cap{font-size:10px;line-height:1.15}\n"
		".legend .nic{display:inline-block;margin:2px}\n"
		"</style></head><body>\n");
	fprintf(out, "<h1>FNN wiring: %d PCs, %d switches</h1>\n<div class='legend'>"
		"<h2>Switches (cable colours)</h2>\n", d->npcs, d->nswitches);
	for (int s = 0; s < d->nswitches; s++)
		if (fnn_design_used(d, s) > 0)
			patch(out, s, "cable");
	fprintf(out, "</div>\n<h2>Labels</h2>\n<div class='labels'>\n");
	for (int pc = 0; pc < d->npcs; pc++) {
		fprintf(out, "<div class='label' data-pc='%d'><div class='pc'>%s%d</div>"
			"<div class='nics'>", pc, prefix, pc);
		for (int k = 0;; k++) {
			char cap[16];
			int s = fnn_nic_switch(d, pc, k);
			if (s < 0)
				break;
			snprintf(cap, sizeof(cap), "eth%d", k);
			patch(out, s, cap);
		}
		fprintf(out, "</div></div>\n");
	}
	fprintf(out, "</div>\n</body></html>\n");
	return ferror(out) ? -EIO : 0;
}
