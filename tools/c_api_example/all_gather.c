/* A complete C program over the C API (ltx/c_api.h): one AllGather across the ranks given on
 * the command line, checked on every rank.
 *
 *   c_api_example [DEVICE...]      e.g. c_api_example 0 0 1: three ranks, two of them on GPU 0
 *
 * Without arguments the ranks are the visible GPUs, one each. Rank r sends 16 + r bf16 tokens of
 * HIDDEN elements whose bytes are all r + 1, on its own stream; afterwards every rank's output
 * holds every rank's tokens in rank order. Prints what it did; exit 0 when every output is
 * right, else 1 (also without a GPU: FAILED_PRECONDITION). Builds against an installed ltx with
 *   cc -std=c99 all_gather.c $(pkg-config --cflags --libs ltx) -L$CUDA_HOME/lib64 -lcudart */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ltx/c_api.h"

#define MAX_RANKS 8
#define HIDDEN 1024
#define ELEMENT_BYTES 2 /* LTX_BFLOAT16 */

/* Prints the failed CUDA call and returns 0, or returns 1 when it succeeded. */
static int CudaOk(cudaError_t error, const char* what) {
  if (error != cudaSuccess) fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(error));
  return error == cudaSuccess;
}

int main(int argc, char** argv) {
  int devices[MAX_RANKS];
  int n = argc - 1;
  if (n > MAX_RANKS) {
    fprintf(stderr, "usage: %s [DEVICE...] (at most %d)\n", argv[0], MAX_RANKS);
    return 1;
  }
  for (int r = 0; r < n; ++r) devices[r] = atoi(argv[r + 1]);

  ltx_runtime_options options;
  ltx_runtime_options_init(&options);  /* every visible GPU, a 10 s timeout */
  if (n > 0) {
    options.devices = devices;
    options.num_devices = n;
  }
  ltx_runtime* runtime;
  if (ltx_runtime_create(&options, &runtime) != LTX_OK) {
    fprintf(stderr, "%s\n", ltx_last_error());  /* e.g. FAILED_PRECONDITION: no CUDA GPU ... */
    return 1;
  }
  ltx_runtime_world_size(runtime, &n);

  /* Each rank: its GPU, its own stream (ranks may share a GPU, never a stream), its buffers. */
  int64_t counts[MAX_RANKS];
  int64_t total = 0;
  for (int r = 0; r < n; ++r) {
    counts[r] = 16 + r;
    total += counts[r];
  }
  const size_t row = (size_t)HIDDEN * ELEMENT_BYTES;
  ltx_rank_buffers buffers[MAX_RANKS];
  int ok = 1;
  for (int r = 0; r < n; ++r) {
    void* input = NULL;
    void* output = NULL;
    cudaStream_t stream = NULL;
    ltx_runtime_device(runtime, r, &devices[r]);
    ok = ok && CudaOk(cudaSetDevice(devices[r]), "cudaSetDevice") &&
         CudaOk(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream") &&
         CudaOk(cudaMalloc(&input, (size_t)counts[r] * row), "cudaMalloc") &&
         CudaOk(cudaMalloc(&output, (size_t)total * row), "cudaMalloc") &&
         CudaOk(cudaMemsetAsync(input, r + 1, (size_t)counts[r] * row, stream), "cudaMemset");
    buffers[r].input = input;
    buffers[r].output = output;
    buffers[r].stream = stream;
  }

  /* The coordinated call: enqueues every rank's part on its stream, then waits up to 30 s. */
  ltx_allgather_shape shape = {LTX_BFLOAT16, /*batch=*/1, HIDDEN, counts, n};
  ltx_op* op = NULL;
  if (ok && (ltx_all_gather(runtime, &shape, buffers, n, NULL, &op) != LTX_OK ||
             ltx_op_wait(op, 30000000) != LTX_OK)) {
    fprintf(stderr, "all_gather: %s\n", ltx_last_error());
    ok = 0;
  }
  if (op != NULL) ltx_op_destroy(op);

  /* Every rank's output: rank s's tokens, bytes s + 1, at token offset counts[0..s). */
  unsigned char* host = malloc((size_t)total * row);
  ok = ok && host != NULL;
  for (int r = 0; ok && r < n; ++r) {
    ok = CudaOk(cudaMemcpy(host, buffers[r].output, (size_t)total * row, cudaMemcpyDeviceToHost),
                "cudaMemcpy");
    const unsigned char* byte = host;
    for (int s = 0; s < n; ++s) {
      for (size_t i = 0; i < (size_t)counts[s] * row; ++i) ok = ok && *byte++ == s + 1;
    }
    if (!ok) fprintf(stderr, "rank %d: the output differs from the ranks' tokens\n", r);
  }
  free(host);
  for (int r = 0; r < n; ++r) {
    cudaSetDevice(devices[r]);
    cudaFree((void*)buffers[r].input);
    cudaFree(buffers[r].output);
    if (buffers[r].stream != NULL) cudaStreamDestroy(buffers[r].stream);
  }
  ltx_runtime_destroy(runtime);
  printf("all_gather of %lld tokens on %d ranks (GPUs", (long long)total, n);
  for (int r = 0; r < n; ++r) printf(" %d", devices[r]);
  printf("): %s\n", ok ? "every output is right" : "FAILED");
  return ok ? 0 : 1;
}
