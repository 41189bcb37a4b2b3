// Peer: MPI ping-pong between two ranks; prints one-way latency and bandwidth. (Copied unchanged from
// the project's shared/peers/mpi_pingpong.c, so that the benchmark builds from this repository alone.)
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int r; MPI_Comm_rank(MPI_COMM_WORLD, &r);
  int sizes[] = {8, 1024, 65536, 1048576, 8388608};
  char* buf = malloc(8388608);
  for (int k = 0; k < 5; k++) {
    int s = sizes[k], iters = s > 100000 ? 50 : 5000;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
      if (r == 0) { MPI_Send(buf, s, MPI_BYTE, 1, 0, MPI_COMM_WORLD); MPI_Recv(buf, s, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }
      else { MPI_Recv(buf, s, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); MPI_Send(buf, s, MPI_BYTE, 0, 0, MPI_COMM_WORLD); }
    }
    double oneway = (MPI_Wtime() - t0) / iters / 2;
    if (r == 0) printf("size=%d oneway_us=%.2f MBps=%.1f\n", s, oneway * 1e6, s / oneway / 1e6);
  }
  MPI_Finalize();
  return 0;
}
