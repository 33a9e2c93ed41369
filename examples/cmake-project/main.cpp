// examples/cmake-project/main.cpp: launches the kernels of kernels/block_reduce.ptx and
// kernels/warp_sum.ptx, compiled ahead of time by ptx2llvm_add_kernels (CMakeLists.txt), checks
// every result against a plain C++ loop, then compiles warp_sum.ptx again at run time through
// the C API (ptx2llvm.h) and checks that too. Prints PASS and exits 0 when all agree.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "block_reduce.ptx.h"  // block_sum_launch, block_max_dyn_launch
#include "ptx2llvm.h"          // the C API: compile PTX at run time
#include "warp_sum.ptx.h"      // warp_sum_launch, warp_allmax_launch

static int failures = 0;

static void expect(bool ok, const char *what, size_t i, double got, double want) {
    if (!ok && failures++ < 10)
        std::fprintf(stderr, "FAIL %s[%zu]: got %.9g, want %.9g\n", what, i, got, want);
}

int main() {
    const unsigned n = 100000;  // not a multiple of the block size: the tails are exercised
    std::vector<float> xf(n);
    std::vector<int32_t> xi(n);
    std::vector<uint32_t> xu(n);
    uint32_t seed = 12345;
    for (unsigned i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        xf[i] = static_cast<float>(seed >> 8 & 0xffff) / 4096.0f - 8.0f;  // exact in float sums
        xi[i] = static_cast<int32_t>(seed) >> 3;
        xu[i] = seed ^ (seed >> 16);
    }

    // block_sum: one partial sum per block of 256 (static shared memory, barriers).
    const unsigned blocks = (n + 255) / 256;
    std::vector<float> partial(blocks);
    if (block_sum_launch({blocks, 1, 1}, {256, 1, 1}, 0, xf.data(), partial.data(), n) != 0)
        return 1;
    for (unsigned b = 0; b < blocks; b++) {
        float want = 0;
        for (unsigned i = b * 256; i < std::min(n, b * 256 + 256); i++) want += xf[i];
        expect(partial[b] == want, "block_sum", b, partial[b], want);
    }

    // block_max_dyn: blocks of 128 with 128 ints of dynamic shared memory.
    const unsigned blocks128 = (n + 127) / 128;
    std::vector<int32_t> pmax(blocks128);
    if (block_max_dyn_launch({blocks128, 1, 1}, {128, 1, 1}, 128 * sizeof(int32_t), xi.data(),
                             pmax.data(), n) != 0)
        return 1;
    for (unsigned b = 0; b < blocks128; b++) {
        int32_t want = INT32_MIN;
        for (unsigned i = b * 128; i < std::min(n, b * 128 + 128); i++) want = std::max(want, xi[i]);
        expect(pmax[b] == want, "block_max_dyn", b, pmax[b], want);
    }

    // warp_sum: one sum per warp of 32 (__shfl_down_sync), 8 warps per block.
    const unsigned warps = (n + 31) / 32;
    std::vector<float> wsum(warps);
    if (warp_sum_launch({(n + 255) / 256, 1, 1}, {256, 1, 1}, 0, xf.data(), wsum.data(), n) != 0)
        return 1;
    for (unsigned w = 0; w < warps; w++) {
        float want = 0;
        for (unsigned i = w * 32; i < std::min(n, w * 32 + 32); i++) want += xf[i];
        expect(wsum[w] == want, "warp_sum", w, wsum[w], want);
    }

    // warp_allmax: every lane gets its warp's maximum (__shfl_xor_sync butterfly).
    std::vector<uint32_t> amax(n);
    if (warp_allmax_launch({(n + 63) / 64, 1, 1}, {64, 1, 1}, 0, xu.data(), amax.data(), n) != 0)
        return 1;
    for (unsigned i = 0; i < n; i++) {
        unsigned w = i / 32;
        uint32_t want = 0;
        for (unsigned j = w * 32; j < std::min(n, w * 32 + 32); j++) want = std::max(want, xu[j]);
        expect(amax[i] == want, "warp_allmax", i, amax[i], want);
    }

    // The C API: compile warp_sum.ptx at run time and launch it on library-owned buffers.
    std::ifstream file(WARP_SUM_PTX);
    std::stringstream text;
    text << file.rdbuf();
    const std::string ptx = text.str();
    char *err = nullptr;
    ptx2llvm_module *m = ptx2llvm_module_from_ptx(ptx.data(), ptx.size(), &err);
    if (!m) {
        std::fprintf(stderr, "FAIL compiling %s: %s\n", WARP_SUM_PTX, err);
        ptx2llvm_string_free(err);
        return 1;
    }
    ptx2llvm_buffer *in = ptx2llvm_buffer_alloc(n * sizeof(float));
    ptx2llvm_buffer *out = ptx2llvm_buffer_alloc(warps * sizeof(float));
    std::memcpy(ptx2llvm_buffer_ptr(in), xf.data(), n * sizeof(float));
    ptx2llvm_arg args[] = {ptx2llvm_arg_buffer(in), ptx2llvm_arg_buffer(out), ptx2llvm_arg_u32(n)};
    if (ptx2llvm_launch(m, "warp_sum", {(n + 127) / 128, 1, 1}, {128, 1, 1}, 0, args, 3, &err) != 0) {
        std::fprintf(stderr, "FAIL launching warp_sum through the C API: %s\n", err);
        ptx2llvm_string_free(err);
        return 1;
    }
    const float *jit = static_cast<const float *>(ptx2llvm_buffer_ptr(out));
    for (unsigned w = 0; w < warps; w++) expect(jit[w] == wsum[w], "C API warp_sum", w, jit[w], wsum[w]);
    ptx2llvm_buffer_free(in);
    ptx2llvm_buffer_free(out);
    ptx2llvm_module_free(m);

    if (failures) {
        std::printf("FAIL (%d mismatches)\n", failures);
        return 1;
    }
    std::printf("PASS: block_sum, block_max_dyn, warp_sum, warp_allmax (%u elements), "
                "and warp_sum compiled at run time (ptx2llvm %s)\n",
                n, ptx2llvm_version());
    return 0;
}
