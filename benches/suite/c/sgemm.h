/* sgemm.h: matrix multiply C = A * B, n x n row major (n a multiple of 32), for c/matmul.c
 * and c/matmul_f16.c.
 * Technique: a cache-blocked SGEMM in the GotoBLAS/BLIS structure: B is packed in KC x NC
 * blocks (shared by the threads, L2/L3-resident) into column panels NR wide, each thread packs
 * its MC x KC block of A (L2-resident) into row panels MR high, and a micro-kernel keeps an
 * MR x NR accumulator tile of C in vector registers (8 x 32 floats: 16 AVX-512 registers)
 * while it streams a panel of A and a panel of B through L1, one broadcast and two vector FMAs
 * per row of the tile and step of k. */
#ifndef SGEMM_H
#define SGEMM_H
#include "bench.h"
#define MR 8
#define NR 32
#define KC 256
#define MC 128
#define NC 512

static inline void micro(long kc, const float *restrict ap, const float *restrict bp,
                         float *restrict c, long ldc, int first) {
    float acc[MR][NR];
    for (int r = 0; r < MR; r++)
#pragma omp simd
        for (int j = 0; j < NR; j++) acc[r][j] = 0.0f;
    for (long k = 0; k < kc; k++) {
        const float *restrict a = ap + k * MR, *restrict b = bp + k * NR;
        for (int r = 0; r < MR; r++)
#pragma omp simd
            for (int j = 0; j < NR; j++) acc[r][j] += a[r] * b[j];
    }
    for (int r = 0; r < MR; r++)
#pragma omp simd
        for (int j = 0; j < NR; j++) c[r * ldc + j] = first ? acc[r][j] : c[r * ldc + j] + acc[r][j];
}

static void matmul(const float *restrict A, const float *restrict B, float *restrict C, long n,
                   float *restrict bpack, float *restrict apack_all) {
#pragma omp parallel
    {
        float *restrict ap = apack_all + (long)omp_get_thread_num() * MC * KC;
        for (long jc = 0; jc < n; jc += NC) {
            long nc = n - jc < NC ? n - jc : NC;
            for (long pc = 0; pc < n; pc += KC) {
                long kc = n - pc < KC ? n - pc : KC;
                /* B[pc:pc+kc, jc:jc+nc] -> panels of NR columns, k-major inside a panel */
#pragma omp for schedule(static)
                for (long jr = 0; jr < nc; jr += NR)
                    for (long k = 0; k < kc; k++)
#pragma omp simd
                        for (int j = 0; j < NR; j++)
                            bpack[jr * kc + k * NR + j] = B[(pc + k) * n + jc + jr + j];
#pragma omp for schedule(dynamic, 1)
                for (long ic = 0; ic < n; ic += MC) {
                    long mc = n - ic < MC ? n - ic : MC;
                    /* A[ic:ic+mc, pc:pc+kc] -> panels of MR rows, k-major inside a panel */
                    for (long ir = 0; ir < mc; ir += MR)
                        for (long k = 0; k < kc; k++)
                            for (int r = 0; r < MR; r++)
                                ap[ir * kc + k * MR + r] = A[(ic + ir + r) * n + pc + k];
                    for (long jr = 0; jr < nc; jr += NR)
                        for (long ir = 0; ir < mc; ir += MR)
                            micro(kc, ap + ir * kc, bpack + jr * kc,
                                  C + (ic + ir) * n + jc + jr, n, pc == 0);
                }
            }
        }
    }
}
#endif
