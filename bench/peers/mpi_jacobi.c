// Peer: 2-D 5-point Jacobi, MPI row strips.
// MPI_Sendrecv every iteration (the textbook MPI stencil). Fixed boundary: top row 1.0, others 0.0.
// Usage: mpi_jacobi N ITERATIONS   -> "n=... iterations=... ranks=... seconds=... mlups=... checksum=..."
// mlups: million lattice-site updates per second; checksum: sum of the interior after the last iteration.
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const long n = argc > 1 ? atol(argv[1]) : 4096, iters = argc > 2 ? atol(argv[2]) : 200;
  const long inner = n - 2;  // interior rows, split as evenly as possible
  const long first = 1 + inner * rank / size, last = 1 + inner * (rank + 1) / size;  // [first, last)
  const long rows = last - first;
  double* a = calloc((size_t)(rows + 2) * n, sizeof(double));
  double* b = calloc((size_t)(rows + 2) * n, sizeof(double));
  if (first == 1) for (long j = 0; j < n; j++) a[j] = b[j] = 1.0;  // global row 0 is this rank's halo row
  const int up = rank > 0 ? rank - 1 : MPI_PROC_NULL, down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (long it = 0; it < iters; it++) {
    MPI_Sendrecv(a + n, (int)n, MPI_DOUBLE, up, 0, a + (rows + 1) * n, (int)n, MPI_DOUBLE, down, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(a + rows * n, (int)n, MPI_DOUBLE, down, 1, a, (int)n, MPI_DOUBLE, up, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (long i = 1; i <= rows; i++)
      for (long j = 1; j < n - 1; j++)
        b[i * n + j] = 0.25 * (a[(i - 1) * n + j] + a[(i + 1) * n + j] + a[i * n + j - 1] + a[i * n + j + 1]);
    double* t = a; a = b; b = t;
  }
  const double seconds = MPI_Wtime() - t0;
  double local = 0, sum = 0;
  for (long i = 1; i <= rows; i++) for (long j = 1; j < n - 1; j++) local += a[i * n + j];
  MPI_Reduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  double slowest = 0;
  MPI_Reduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("n=%ld iterations=%ld ranks=%d seconds=%.4f mlups=%.1f checksum=%.10e\n", n, iters, size, slowest,
           (double)inner * inner * iters / slowest / 1e6, sum);
  free(a); free(b);
  MPI_Finalize();
  return 0;
}
