/*
 * nvm_module.h - a compiled PDL program: the relocatable module pdlc writes and the
 * loader reads.  Decoding checks only that the file is well formed; whether the
 * code is safe to run is nvm_verify's job.
 *
 * File layout (all integers little-endian):
 *   "NVMM" u16 version(=NVM_MODULE_VERSION) u16 flags(=0)
 *   u8 namelen, name bytes                 program name (<= 31 bytes)
 *   u32 data_words                         size of the data section in 64-bit words
 *   u32 init_pc                            NVM_NO_PC when there is no BEGIN block
 *   u16 nvars, u16 ntrig, u16 naddr, u16 0
 *   u32 code_len
 *   nvars x { u32 off, u32 len, u8 namelen, name }   variables, in words
 *   ntrig x { u16 id, u32 pc }             trigger blocks (pc NVM_NO_PC: declared, no block)
 *   naddr x { u8 len, bytes }              AT addresses used by SEND
 *   code_len bytes of code
 */
#ifndef NVM_MODULE_H
#define NVM_MODULE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define NVM_MODULE_VERSION 2 /* 2: MSGB added (opcodes renumbered) */
#define NVM_NAME_MAX 31
#define NVM_NO_PC 0xffffffffu
#define NVM_ADDR_MAX 16          /* bytes in an AT address */
#define NVM_DATA_MAX_WORDS 65536 /* 512 KiB of variables per program */
#define NVM_CODE_MAX 65536       /* bytes of code per program */
#define NVM_VARS_MAX 4096
#define NVM_TRIG_MAX 256
#define NVM_ADDRS_MAX 256

struct nvm_var {
	uint32_t off, len; /* words */
	char name[NVM_NAME_MAX + 1];
};

struct nvm_trig {
	uint16_t id;
	uint32_t pc;
};

struct nvm_addr {
	uint8_t len;
	uint8_t b[NVM_ADDR_MAX];
};

struct nvm_module {
	char name[NVM_NAME_MAX + 1];
	uint32_t data_words;
	uint32_t init_pc;
	uint16_t nvars, ntrig, naddr;
	struct nvm_var *vars;
	struct nvm_trig *trigs;
	struct nvm_addr *addrs;
	uint32_t code_len;
	uint8_t *code;
};

/* Parse a module file image.  Returns 0 or -EINVAL/-ENOMEM with a message in err. */
int nvm_module_decode(const void *buf, size_t len, struct nvm_module **out,
		      char *err, size_t errlen);
/* Serialise; *buf is malloc'd.  Returns 0 or -ENOMEM. */
int nvm_module_encode(const struct nvm_module *m, uint8_t **buf, size_t *len);
/* Deep copy. NULL on allocation failure. */
struct nvm_module *nvm_module_dup(const struct nvm_module *m);
void nvm_module_free(struct nvm_module *m);

/* Read/write a module file.  Return 0 or a negative errno. */
int nvm_module_read_file(const char *path, struct nvm_module **out, char *err, size_t errlen);
int nvm_module_write_file(const char *path, const struct nvm_module *m);

/* Print the module (header, tables, one instruction per line) to f. */
void nvm_disasm(const struct nvm_module *m, FILE *f);

#endif
