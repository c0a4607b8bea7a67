/*
 * sm_array.h - arrays that grow as they are filled.
 *
 *	struct item *v = NULL;
 *	int n = 0, cap = 0;
 *	...
 *	if (sm_grow(&v, n, &cap, sizeof(*v)))
 *		return -ENOMEM;
 *	v[n++] = item;
 */
#ifndef SM_ARRAY_H
#define SM_ARRAY_H

#include <stddef.h>

/* Makes room for element n of the array whose pointer is at arrp (a T **, capacity *cap
 * elements of elem bytes), doubling the capacity (first 16) as often as needed: 0, or
 * -ENOMEM with the array as it was. */
int sm_grow(void *arrp, int n, int *cap, size_t elem);

#endif
