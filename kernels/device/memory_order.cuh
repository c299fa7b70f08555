// PTX memory-order primitives for flags shared between GPUs, following the PTX memory
// consistency model: a release store at system scope publishes everything the storing thread
// (and, through fences and barriers, its block) wrote before it; an acquire load at system scope
// that reads the value makes those writes visible to the loading thread. How the protocols use
// them: kernels/PROTOCOL.md.
#ifndef KERNELS_DEVICE_MEMORY_ORDER_CUH_
#define KERNELS_DEVICE_MEMORY_ORDER_CUH_

#include <cstdint>
#include <cstring>

namespace ltx {

// Stores `value` with release semantics at system scope.
__device__ __forceinline__ void StoreReleaseSystem(uint64_t* address, uint64_t value) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(address), "l"(value) : "memory");
}

__device__ __forceinline__ void StoreReleaseSystem(uint32_t* address, uint32_t value) {
  asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(address), "r"(value) : "memory");
}

// Loads with acquire semantics at system scope.
__device__ __forceinline__ uint64_t LoadAcquireSystem(const uint64_t* address) {
  uint64_t value;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(value) : "l"(address) : "memory");
  return value;
}

// Atomic maximum at system scope with acquire semantics (atom.acquire.sys): stores
// `max(*address, value)` and returns the previous value; later memory operations of the thread
// stay after it. Without release semantics it does not wait for the thread's earlier stores
// (e.g. over NVLink) to become visible first. Atomic with respect to the same operation from any
// GPU with native peer atomics on the location.
__device__ __forceinline__ uint64_t AtomicMaxAcquireSystem(uint64_t* address, uint64_t value) {
  uint64_t previous;
  asm volatile("atom.acquire.sys.global.max.u64 %0, [%1], %2;"
               : "=l"(previous)
               : "l"(address), "l"(value)
               : "memory");
  return previous;
}

// Atomic maximum at system scope with acquire and release semantics (atom.acq_rel.sys): as
// AtomicMaxAcquireSystem, and also a release: what the thread did before it, and what it
// observed of other threads' writes through fences and barriers, is visible to any thread that
// reads the value it stored (or a later one) with acquire semantics.
__device__ __forceinline__ uint64_t AtomicMaxAcqRelSystem(uint64_t* address, uint64_t value) {
  uint64_t previous;
  asm volatile("atom.acq_rel.sys.global.max.u64 %0, [%1], %2;"
               : "=l"(previous)
               : "l"(address), "l"(value)
               : "memory");
  return previous;
}

// Relaxed (non-synchronising but coherent) accesses at system scope, for payload fields that a
// release store orders and for flags polled without ordering needs.
__device__ __forceinline__ void StoreRelaxedSystem(uint64_t* address, uint64_t value) {
  asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(address), "l"(value) : "memory");
}
__device__ __forceinline__ uint64_t LoadRelaxedSystem(const uint64_t* address) {
  uint64_t value;
  asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(value) : "l"(address) : "memory");
  return value;
}
__device__ __forceinline__ uint32_t LoadRelaxedSystem(const uint32_t* address) {
  uint32_t value;
  asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(value) : "l"(address) : "memory");
  return value;
}
__device__ __forceinline__ void StoreRelaxedSystem(uint32_t* address, uint32_t value) {
  asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(address), "r"(value) : "memory");
}

// Loads a struct made of 8-byte words (e.g. a payload that an acquire load made visible) with
// relaxed loads at system scope, one per word.
template <typename T>
__device__ __forceinline__ T LoadRelaxedSystemWords(const T* address) {
  static_assert(sizeof(T) % sizeof(uint64_t) == 0 && alignof(T) >= alignof(uint64_t),
                "LoadRelaxedSystemWords needs a struct of aligned 8-byte words");
  constexpr int kWords = sizeof(T) / sizeof(uint64_t);
  const uint64_t* from = reinterpret_cast<const uint64_t*>(address);
  uint64_t words[kWords];
#pragma unroll
  for (int i = 0; i < kWords; ++i) words[i] = LoadRelaxedSystem(from + i);
  T value;
  memcpy(&value, words, sizeof(T));
  return value;
}

// Nanoseconds of the GPU's global timer (%globaltimer); coarse, but monotonic and comparable
// across the blocks of one GPU. The memory clobber keeps the compiler from moving the read across
// memory accesses (the assembler may still schedule it early: kernels/wire/phase_timestamps.h).
__device__ __forceinline__ uint64_t GlobalTimerNs() {
  uint64_t now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now) : : "memory");
  return now;
}

// 16-byte load of data read once (cache-streaming, `ld.global.cs`). An intrinsic, not inline
// assembly: the compiler may then issue the loads of later iterations before the stores of
// earlier ones. On 2 x H200 a 16-block AllGather moved 64 MiB per rank in 209 us so, against
// 415 us with volatile assembly; 132 blocks: 196 against 202 us.
__device__ __forceinline__ int4 LoadVectorStreaming(const int4* address) { return __ldcs(address); }

// 16-byte store of data nobody on this GPU re-reads (cache-streaming, `st.global.cs`); an
// ordinary store to the compiler, ordered by the barriers and fences that follow it.
__device__ __forceinline__ void StoreVectorStreaming(int4* address, const int4& v) {
  __stcs(address, v);
}

}  // namespace ltx

#endif  // KERNELS_DEVICE_MEMORY_ORDER_CUH_
