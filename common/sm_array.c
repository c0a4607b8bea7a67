/* sm_array.c - arrays that grow as they are filled (see sm_array.h). */
#include "sm_array.h"
#include "sm_lib.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

SM_LIBFN int sm_grow(void *arrp, int n, int *cap, size_t elem)
{
	if (n < *cap)
		return 0;
	int ncap = *cap ? *cap : 16;
	while (ncap <= n) {
		if (ncap > INT_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	void *arr;
	/* through memcpy: arrp points at a T *, not at a void * */
	memcpy(&arr, arrp, sizeof(arr));
	arr = realloc(arr, (size_t)ncap * elem);
	if (!arr)
		return -ENOMEM;
	memcpy(arrp, &arr, sizeof(arr));
	*cap = ncap;
	return 0;
}
