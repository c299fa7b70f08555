// The FP8 wire's pair conversions on the GPU against the host's one-by-one ones
// (kernels/wire/fp8_rows.h): code built for compute capability 8.9 and up converts with the
// GPU's own instructions, which the host reference of every FP8 test never does, so both must
// give the same code and the same decoded bits for every input: every code's value and the
// midpoints around it (ties and the floats next to them), the saturation range, infinities, NaNs
// of both signs, zeros, subnormals, a sweep over the float bit patterns; every pair of codes.
// This build has the instructions on sm_90 and newer GPUs; an 8.x GPU runs the sm_80 code, the
// host's path, which the test then compares with itself.
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/reduce/reduce_math.h"
#include "kernels/wire/fp8_rows.h"
#include "tests/fp8_rows_kernels.h"
#include "tools/testing/test_ranks.h"
#include "tools/testing/visible_gpus.h"

namespace ltx {
namespace {

// Floats that probe every rounding decision of e4m3.
std::vector<float> ProbeValues() {
  std::vector<float> values;
  for (int code = 0; code < 256; ++code) {
    if ((code & 0x7f) == 0x7f) continue;  // NaN.
    const float value = E4M3ToFloat(static_cast<uint8_t>(code));
    values.push_back(value);
    if ((code & 0x7f) < 0x7e) {  // Up to the next code of the same sign: the tie and its sides.
      const float next = E4M3ToFloat(static_cast<uint8_t>(code + 1));
      const float tie = (value + next) / 2;  // Exact: both have 4 significant bits.
      values.push_back(tie);
      values.push_back(std::nextafter(tie, 0.0f));
      values.push_back(std::nextafter(tie, tie * 2));
    }
  }
  for (const float big : {447.9f, 448.0f, 455.0f, 463.9f, 464.0f, 464.1f, 480.0f, 1e6f, 3e38f,
                          INFINITY}) {
    values.push_back(big);
    values.push_back(-big);
  }
  for (const uint32_t nan : {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff800001u, 0x7fffffffu}) {
    values.push_back(FloatOfBits(nan));
  }
  for (int exponent = -149; exponent <= -5; ++exponent) {  // Tiny values and subnormals.
    values.push_back(std::ldexp(1.0f, exponent));
    values.push_back(-std::ldexp(1.5f, exponent));
  }
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 4093) {  // A sweep of all floats.
    values.push_back(FloatOfBits(static_cast<uint32_t>(bits)));
  }
  return values;
}

template <typename T>
struct DeviceArray {
  explicit DeviceArray(size_t count) {
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&data), count * sizeof(T)), cudaSuccess);
    EXPECT_EQ(cudaMemset(data, 0xa5, count * sizeof(T)), cudaSuccess);  // Poisoned.
  }
  ~DeviceArray() { cudaFree(data); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  T* data = nullptr;
};

TEST(Fp8RowsGpuTest, EncodesEveryProbeAsTheHostDoes) {
  if (VisibleGpuCount() == 0) LTX_SKIP_GPU_TEST("needs a GPU, none is visible");
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  const std::vector<float> probes = ProbeValues();
  // Each probe as a pair's low value and as its high one: the second copy starts at an odd
  // index, so probe i lands in slot i % 2 of its pair in the first copy and in the other slot
  // in the second.
  std::vector<float> values = probes;
  if (values.size() % 2 == 0) values.push_back(1.0f);
  values.insert(values.end(), probes.begin(), probes.end());
  if (values.size() % 2 != 0) values.push_back(-1.0f);
  const int64_t pairs = static_cast<int64_t>(values.size() / 2);
  DeviceArray<float> device_values(values.size());
  DeviceArray<uint16_t> device_codes(pairs);
  ASSERT_EQ(cudaMemcpy(device_values.data, values.data(), values.size() * sizeof(float),
                       cudaMemcpyHostToDevice),
            cudaSuccess);
  ASSERT_EQ(LaunchE4M3PairFromFloats(device_values.data, device_codes.data, pairs, nullptr),
            cudaSuccess);
  std::vector<uint16_t> codes(pairs);
  ASSERT_EQ(cudaMemcpy(codes.data(), device_codes.data, pairs * sizeof(uint16_t),
                       cudaMemcpyDeviceToHost),
            cudaSuccess);
  int wrong = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    const uint8_t got = static_cast<uint8_t>(codes[i / 2] >> (8 * (i % 2)));
    const uint8_t expected = E4M3FromFloat(values[i]);
    if (got != expected && ++wrong <= 10) {
      ADD_FAILURE() << "float bits 0x" << std::hex << BitsOfFloat(values[i]) << " (" << values[i]
                    << ", the pair's " << (i % 2 ? "high" : "low") << " value): the GPU's code 0x"
                    << int{got} << ", the host's 0x" << int{expected};
    }
  }
  EXPECT_EQ(wrong, 0) << "of " << values.size() << " values";
}

TEST(Fp8RowsGpuTest, DecodesEveryPairOfCodesAsTheHostDoes) {
  if (VisibleGpuCount() == 0) LTX_SKIP_GPU_TEST("needs a GPU, none is visible");
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  constexpr int kValues = 2 << 16;  // Two per pair of codes.
  DeviceArray<uint32_t> values(kValues);
  DeviceArray<uint16_t> bf16(kValues);
  DeviceArray<uint16_t> fp16(kValues);
  for (const float scale : {1.0f, 0.0123f, kFp8MinScale, 1e30f, 448.0f / 3.0f}) {
    ASSERT_EQ(LaunchE4M3PairDecode(scale, values.data, bf16.data, fp16.data, nullptr),
              cudaSuccess);
    std::vector<uint32_t> got_values(kValues);
    std::vector<uint16_t> got_bf16(kValues), got_fp16(kValues);
    ASSERT_EQ(cudaMemcpy(got_values.data(), values.data, kValues * 4, cudaMemcpyDeviceToHost),
              cudaSuccess);
    ASSERT_EQ(cudaMemcpy(got_bf16.data(), bf16.data, kValues * 2, cudaMemcpyDeviceToHost),
              cudaSuccess);
    ASSERT_EQ(cudaMemcpy(got_fp16.data(), fp16.data, kValues * 2, cudaMemcpyDeviceToHost),
              cudaSuccess);
    int wrong = 0;
    for (int i = 0; i < kValues; ++i) {
      const uint8_t code = static_cast<uint8_t>((i / 2) >> (8 * (i % 2)));
      const float host = E4M3ToFloat(code);
      // A NaN's payload may differ on the GPU; Fp8DecodeValue makes it canonical.
      const bool value_ok = std::isnan(host) ? std::isnan(FloatOfBits(got_values[i]))
                                             : got_values[i] == BitsOfFloat(host);
      const bool bf16_ok = got_bf16[i] == Fp8Decode<BFloat16Element>(code, scale);
      const bool fp16_ok = got_fp16[i] == Fp8Decode<Float16Element>(code, scale);
      if (!(value_ok && bf16_ok && fp16_ok) && ++wrong <= 10) {
        ADD_FAILURE() << "pair 0x" << std::hex << i / 2 << ", code 0x" << int{code} << std::dec
                      << ", scale " << scale << ": value " << (value_ok ? "ok" : "differs")
                      << ", bf16 " << (bf16_ok ? "ok" : "differs") << ", fp16 "
                      << (fp16_ok ? "ok" : "differs");
      }
    }
    EXPECT_EQ(wrong, 0) << "scale " << scale;
  }
}

}  // namespace
}  // namespace ltx
