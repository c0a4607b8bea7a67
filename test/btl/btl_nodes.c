/*
 * btl_nodes: Open MPI's idea of the nodes matches the host names. Each rank's
 * MPI_COMM_TYPE_SHARED communicator must hold exactly the ranks whose host name is its own
 * (test/btl/multinode.sh's fake nodes are UTS namespaces: osc rdma and the BTLs go by Open
 * MPI's node locality, which must agree with them for the test to mean anything).
 *   btl_nodes   prints "CHECK <rank> <host> <ranks of its node>" per rank
 */
#include "btl_test.h"

#include <unistd.h>

#define HOST_MAX 64

int main(int argc, char **argv)
{
	char host[HOST_MAX] = "", *hosts, line[1024];
	int rank, size, nlocal, *local, *world, len = 0, want = 0;
	MPI_Group wg, lg;
	MPI_Comm node;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	BT_EXPECT(0 == gethostname(host, sizeof(host) - 1), "gethostname");
	hosts = calloc((size_t)size, HOST_MAX);
	local = malloc((size_t)size * sizeof(int));
	world = malloc((size_t)size * sizeof(int));
	BT_EXPECT(hosts && local && world, "malloc");
	MPI_Allgather(host, HOST_MAX, MPI_CHAR, hosts, HOST_MAX, MPI_CHAR, MPI_COMM_WORLD);
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
	MPI_Comm_size(node, &nlocal);
	MPI_Comm_group(node, &lg);
	MPI_Comm_group(MPI_COMM_WORLD, &wg);
	for (int i = 0; i < nlocal; i++)
		local[i] = i;
	MPI_Group_translate_ranks(lg, nlocal, local, wg, world);
	for (int i = 0; i < nlocal; i++) {
		BT_EXPECT(0 == strcmp(hosts + (size_t)world[i] * HOST_MAX, host),
			  "Open MPI puts rank %d (on %s) on my node (%s)", world[i],
			  hosts + (size_t)world[i] * HOST_MAX, host);
		if ((size_t)len < sizeof(line) - 16)
			len += snprintf(line + len, sizeof(line) - (size_t)len, " %d", world[i]);
	}
	for (int r = 0; r < size; r++)
		want += 0 == strcmp(hosts + (size_t)r * HOST_MAX, host);
	BT_EXPECT(want == nlocal, "%d ranks on %s, Open MPI's node has %d", want, host, nlocal);
	printf("CHECK %d %s%s\n", rank, host, line);
	MPI_Group_free(&lg);
	MPI_Group_free(&wg);
	MPI_Comm_free(&node);
	free(hosts);
	free(local);
	free(world);
	MPI_Finalize();
	return 0;
}
