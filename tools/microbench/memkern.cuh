// Streaming kernels shared by l2_bw.cu and dram_bw.cu. Grid-stride loops over
// int4 (16 bytes per thread per access), UNR independent loads in flight per
// thread; block thread 0 writes start/end clock64 + globaltimer stamps.
#pragma once
#include "common.cuh"

template <int MODE>  // 0: ld.global.cg (L2, bypass L1), 1: ld.global.ca
__device__ __forceinline__ int4 ld16(const int4* p) {
  return MODE == 0 ? __ldcg(p) : __ldca(p);
}

template <int UNR, int MODE>
__global__ void rd(const int4* __restrict__ b, size_t n, int passes, Stamp* st,
                   int4* sink, int flag) {
  size_t tid = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  size_t stride = (size_t)gridDim.x * blockDim.x;
  long long c0 = clk();
  unsigned long long g0 = gtimer();
  int acc = 0;
  for (int p = 0; p < passes; p++) {
    size_t i = tid;
    for (; i + (UNR - 1) * stride < n; i += UNR * stride) {
      int4 v[UNR];
#pragma unroll
      for (int u = 0; u < UNR; u++) v[u] = ld16<MODE>(b + i + u * stride);
#pragma unroll
      for (int u = 0; u < UNR; u++) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
    for (; i < n; i += stride) {
      int4 v = ld16<MODE>(b + i);
      acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) st[blockIdx.x] = {c0, clk(), g0, gtimer(), smid(), 0};
  if (flag) sink[tid] = make_int4(acc, 0, 0, 0);
}

// Reads `total` int4 elements at index (j & mask): a buffer of mask+1 elements
// read total/(mask+1) times, with UNR independent loads in flight per thread
// across pass boundaries.
template <int UNR, int MODE>
__global__ void rdm(const int4* __restrict__ b, size_t mask, size_t total, Stamp* st,
                    int4* sink, int flag) {
  size_t tid = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  size_t stride = (size_t)gridDim.x * blockDim.x;
  long long c0 = clk();
  unsigned long long g0 = gtimer();
  int acc = 0;
  size_t j = tid;
  for (; j + (UNR - 1) * stride < total; j += UNR * stride) {
    int4 v[UNR];
#pragma unroll
    for (int u = 0; u < UNR; u++) v[u] = ld16<MODE>(b + ((j + u * stride) & mask));
#pragma unroll
    for (int u = 0; u < UNR; u++) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; j < total; j += stride) {
    int4 v = ld16<MODE>(b + (j & mask));
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  __syncthreads();
  if (threadIdx.x == 0) st[blockIdx.x] = {c0, clk(), g0, gtimer(), smid(), 0};
  if (flag) sink[tid] = make_int4(acc, 0, 0, 0);
}

template <int UNR>
__global__ void cpy(const int4* __restrict__ a, int4* __restrict__ b, size_t n, Stamp* st) {
  size_t tid = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  size_t stride = (size_t)gridDim.x * blockDim.x;
  long long c0 = clk();
  unsigned long long g0 = gtimer();
  size_t i = tid;
  for (; i + (UNR - 1) * stride < n; i += UNR * stride) {
    int4 v[UNR];
#pragma unroll
    for (int u = 0; u < UNR; u++) v[u] = __ldcs(a + i + u * stride);
#pragma unroll
    for (int u = 0; u < UNR; u++) __stcs(b + i + u * stride, v[u]);
  }
  for (; i < n; i += stride) __stcs(b + i, __ldcs(a + i));
  if (threadIdx.x == 0) st[blockIdx.x] = {c0, clk(), g0, gtimer(), smid(), 0};
}

template <int UNR>
__global__ void wr(int4* __restrict__ b, size_t n, Stamp* st) {
  size_t tid = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  size_t stride = (size_t)gridDim.x * blockDim.x;
  long long c0 = clk();
  unsigned long long g0 = gtimer();
  int4 v = make_int4((int)tid, 1, 2, 3);
  size_t i = tid;
  for (; i + (UNR - 1) * stride < n; i += UNR * stride) {
#pragma unroll
    for (int u = 0; u < UNR; u++) __stcs(b + i + u * stride, v);
  }
  for (; i < n; i += stride) __stcs(b + i, v);
  if (threadIdx.x == 0) st[blockIdx.x] = {c0, clk(), g0, gtimer(), smid(), 0};
}

__global__ void fill(int4* b, size_t n) {
  size_t tid = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  for (size_t i = tid; i < n; i += (size_t)gridDim.x * blockDim.x)
    b[i] = make_int4((int)i, (int)(i * 7), (int)(i ^ 0x5a5a5a5a), 12345);
}

static std::vector<Stamp> get_stamps(Stamp* d, int n) {
  std::vector<Stamp> s(n);
  CK(cudaMemcpy(s.data(), d, sizeof(Stamp) * n, cudaMemcpyDeviceToHost));
  return s;
}
static int distinct_sms(const std::vector<Stamp>& s) {
  std::vector<unsigned> v;
  for (auto& x : s) v.push_back(x.sm);
  std::sort(v.begin(), v.end());
  return (int)(std::unique(v.begin(), v.end()) - v.begin());
}
