// Tests of CUDA error to absl::Status conversion (ltx/cuda/cuda_status.h, and the driver API's
// DriverStatus of ltx/cuda/driver_api.h): canonical codes and messages. Needs no GPU.
#include "ltx/cuda/cuda_status.h"

#include <cuda_runtime_api.h>

#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ltx/cuda/driver_api.h"

namespace ltx {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(CudaStatusTest, SuccessIsOk) { EXPECT_TRUE(CudaStatus(cudaSuccess, "anything").ok()); }

TEST(CudaStatusTest, NoDeviceIsFailedPrecondition) {
  EXPECT_EQ(CudaStatus(cudaErrorNoDevice, "count").code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(CudaStatus(cudaErrorInsufficientDriver, "init").code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(CudaStatus(cudaErrorPeerAccessUnsupported, "peer").code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(CudaStatusTest, MemoryAllocationIsResourceExhausted) {
  EXPECT_EQ(CudaStatus(cudaErrorMemoryAllocation, "malloc").code(),
            absl::StatusCode::kResourceExhausted);
}

TEST(CudaStatusTest, InvalidValueIsInvalidArgument) {
  EXPECT_EQ(CudaStatus(cudaErrorInvalidValue, "copy").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CudaStatus(cudaErrorInvalidDevice, "set device").code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(CudaStatusTest, OtherErrorsAreInternal) {
  EXPECT_EQ(CudaStatus(cudaErrorNoKernelImageForDevice, "load").code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(CudaStatus(cudaErrorNotSupported, "attribute").code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_EQ(CudaStatus(cudaErrorLaunchOutOfResources, "launch").code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(CudaStatus(cudaErrorStreamCaptureUnsupported, "capture").code(),
            absl::StatusCode::kInternal);
}

// A fault on the GPU ends its CUDA context for the whole process: DataLoss, saying so, from the
// runtime API and the driver API alike.
TEST(CudaStatusTest, FaultsOnTheGpuAreDataLossAndSayTheContextIsLost) {
  struct Fault {
    cudaError_t runtime;
    CUresult driver;
  };
  const Fault faults[] = {
      {cudaErrorIllegalAddress, CUDA_ERROR_ILLEGAL_ADDRESS},
      {cudaErrorLaunchFailure, CUDA_ERROR_LAUNCH_FAILED},
      {cudaErrorHardwareStackError, CUDA_ERROR_HARDWARE_STACK_ERROR},
      {cudaErrorIllegalInstruction, CUDA_ERROR_ILLEGAL_INSTRUCTION},
      {cudaErrorMisalignedAddress, CUDA_ERROR_MISALIGNED_ADDRESS},
      {cudaErrorInvalidAddressSpace, CUDA_ERROR_INVALID_ADDRESS_SPACE},
      {cudaErrorInvalidPc, CUDA_ERROR_INVALID_PC},
      {cudaErrorAssert, CUDA_ERROR_ASSERT},
      {cudaErrorLaunchTimeout, CUDA_ERROR_LAUNCH_TIMEOUT},
      {cudaErrorECCUncorrectable, CUDA_ERROR_ECC_UNCORRECTABLE}};
  for (const Fault& fault : faults) {
    const absl::Status from_runtime = CudaStatus(fault.runtime, "rank 1: cudaStreamSynchronize");
    EXPECT_THAT(std::string(from_runtime.message()), HasSubstr(cudaGetErrorName(fault.runtime)));
    for (const absl::Status& status :
         {from_runtime, DriverStatus(fault.driver, "cuStreamSynchronize")}) {
      EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
      EXPECT_THAT(std::string(status.message()), HasSubstr("only a new process")) << status;
    }
  }
  EXPECT_EQ(DriverStatus(CUDA_ERROR_UNKNOWN, "cuMemMap").code(), absl::StatusCode::kInternal);
}

TEST(CudaStatusTest, MessageHasWhatAndTheErrorName) {
  const absl::Status status = CudaStatus(cudaErrorMemoryAllocation, "cudaMalloc of 64 bytes");
  const std::string message(status.message());
  EXPECT_THAT(message, StartsWith("cudaMalloc of 64 bytes: "));
  EXPECT_THAT(message, HasSubstr("cudaErrorMemoryAllocation"));
  EXPECT_THAT(message, HasSubstr(cudaGetErrorString(cudaErrorMemoryAllocation)));
}

TEST(CudaStatusTest, RankStatusNamesTheRank) {
  EXPECT_TRUE(RankCudaStatus(cudaSuccess, 3, "kernel launch").ok());
  const absl::Status status = RankCudaStatus(cudaErrorInvalidValue, 3, "kernel launch");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "rank 3: kernel launch: cudaErrorInvalidValue: invalid argument");
}

TEST(CudaStatusTest, ErrorFromARealCallWithoutAGpuIsNotOk) {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error == cudaSuccess) GTEST_SKIP() << "a GPU is present";
  const absl::Status status = CudaStatus(error, "cudaGetDeviceCount");
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), HasSubstr(cudaGetErrorName(error)));
}

}  // namespace
}  // namespace ltx
