// Shared helpers for the H200 microbenchmarks: error checks, clock reads,
// medians, and a tiny JSON emitter. Each program prints one JSON object
// {"topic": ..., "results": {...}, "method": {...}} on stdout; diagnostics go
// to stderr. combine.py merges them.
#pragma once
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#define CK(x)                                                                 \
  do {                                                                        \
    cudaError_t e_ = (x);                                                     \
    if (e_ != cudaSuccess) {                                                  \
      fprintf(stderr, "CUDA error %s at %s:%d: %s\n", #x, __FILE__, __LINE__, \
              cudaGetErrorString(e_));                                        \
      exit(1);                                                                \
    }                                                                         \
  } while (0)
#define CKL()                          \
  do {                                 \
    CK(cudaGetLastError());            \
    CK(cudaDeviceSynchronize());       \
  } while (0)

__device__ __forceinline__ long long clk() {
  long long t;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
  return t;
}
__device__ __forceinline__ unsigned long long gtimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
  return t;
}
__device__ __forceinline__ unsigned smid() {
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}

// Start/end stamps of one block (thread 0): SM cycles and globaltimer ns.
struct Stamp {
  long long c0, c1;
  unsigned long long g0, g1;
  unsigned sm;
  unsigned pad;
};

static double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
static double pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = (size_t)(p / 100.0 * (v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

struct EvTimer {
  cudaEvent_t a, b;
  EvTimer() {
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
  }
  ~EvTimer() {
    cudaEventDestroy(a);
    cudaEventDestroy(b);
  }
  void start(cudaStream_t s = 0) { CK(cudaEventRecord(a, s)); }
  float stop_ms(cudaStream_t s = 0) {
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    return ms;
  }
};

static std::string jnum(double v) {
  char buf[64];
  if (v == (long long)v && std::abs(v) < 1e15)
    snprintf(buf, sizeof buf, "%lld", (long long)v);
  else
    snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}
static std::string jstr(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (c == '\n') { o += "\\n"; continue; }
    o += c;
  }
  return o + "\"";
}

struct Json {
  std::vector<std::pair<std::string, std::string>> kv;
  Json& num(const std::string& k, double v) { kv.push_back({k, jnum(v)}); return *this; }
  Json& str(const std::string& k, const std::string& v) { kv.push_back({k, jstr(v)}); return *this; }
  Json& raw(const std::string& k, const std::string& v) { kv.push_back({k, v}); return *this; }
  Json& obj(const std::string& k, const Json& j) { kv.push_back({k, j.dump()}); return *this; }
  std::string dump() const {
    std::string o = "{";
    for (size_t i = 0; i < kv.size(); i++) {
      if (i) o += ", ";
      o += jstr(kv[i].first) + ": " + kv[i].second;
    }
    return o + "}";
  }
};
static std::string jarr(const std::vector<std::string>& v) {
  std::string o = "[";
  for (size_t i = 0; i < v.size(); i++) o += (i ? ", " : "") + v[i];
  return o + "]";
}

static void emit(const char* topic, const Json& results, const Json& method) {
  Json top;
  top.str("topic", topic).obj("results", results).obj("method", method);
  printf("%s\n", top.dump().c_str());
  fflush(stdout);
}

// One warp's mma.sync.m16n8k16, f16 operands, f32 accumulator d (in and out).
__device__ __forceinline__ void mma_f16(float* d, const unsigned* a, const unsigned* b) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// The shared memory of one SM and the most one block may opt into (bytes). Lets `kernel` take
// dynamic shared memory up to the opt-in limit less 1 KB (its static shared memory), so that a
// launch's dynamic size sets how many of its blocks share an SM.
struct SmemLimits {
  int per_sm, optin;
};
template <class Kernel>
static SmemLimits allow_dynamic_smem(Kernel kernel) {
  SmemLimits l{0, 0};
  CK(cudaDeviceGetAttribute(&l.per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, 0));
  CK(cudaDeviceGetAttribute(&l.optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
  CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, l.optin - 1024));
  return l;
}

static int num_sms() {
  int d = 0, n = 0;
  CK(cudaGetDevice(&d));
  CK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, d));
  return n;
}

// SM clock (MHz) from one block's stamps.
static double stamp_mhz(const Stamp& s) {
  double ns = (double)(s.g1 - s.g0);
  return ns > 0 ? (double)(s.c1 - s.c0) / ns * 1e3 : 0;
}
