/* README's C example: two ranks gather their tokens (on GPUs 0 and 1, or both on GPU 0) and
 * every output is checked. Build: cc -std=c99 quick_start.c $(pkg-config --cflags --libs ltx)
 *   -L${CUDA_HOME:-/usr/local/cuda}/lib64 -lcudart */
#include <stdio.h>

#include "ltx/c_api.h"

int main(void) {
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) return printf("no GPU\n"), 1;
  int devices[2] = {0, gpus > 1 ? 1 : 0};   /* rank order; {0, 0}: two ranks on GPU 0 */
  ltx_runtime_options options;
  ltx_runtime_options_init(&options);       /* 10 s timeout */
  options.devices = devices;
  options.num_devices = 2;
  ltx_runtime* runtime = NULL;
  if (ltx_runtime_create(&options, &runtime) != LTX_OK) {
    return fprintf(stderr, "%s\n", ltx_last_error()), 1;
  }
  int64_t counts[2] = {100, 80};            /* tokens per rank: uneven, zeros allowed */
  const size_t row = 4096 * 2;              /* hidden 4096, bf16 */
  ltx_rank_buffers buffers[2];
  for (int r = 0; r < 2; ++r) {             /* each rank: its GPU's memory, its own stream */
    void *in, *out;
    cudaStream_t stream;
    cudaSetDevice(devices[r]);
    cudaMalloc(&in, counts[r] * row);
    cudaMalloc(&out, (counts[0] + counts[1]) * row);
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    cudaMemsetAsync(in, r + 1, counts[r] * row, stream);  /* rank r's tokens: bytes r + 1 */
    ltx_rank_buffers b = {in, out, stream};
    buffers[r] = b;
  }
  ltx_allgather_shape shape = {LTX_BFLOAT16, /*batch=*/1, /*hidden=*/4096, counts, 2};
  ltx_op* op = NULL;
  int code = ltx_all_gather(runtime, &shape, buffers, 2, NULL, &op);  /* coordinated call */
  if (code == LTX_OK) code = ltx_op_wait(op, 30000000);              /* waits up to 30 s */
  if (code != LTX_OK) fprintf(stderr, "%s\n", ltx_last_error());
  if (op != NULL) ltx_op_destroy(op);
  static unsigned char gathered[180 * 4096 * 2];
  for (int r = 0; r < 2 && code == LTX_OK; ++r) {  /* every output: 100 x 1s, then 80 x 2s */
    cudaSetDevice(devices[r]);
    cudaMemcpy(gathered, buffers[r].output, sizeof(gathered), cudaMemcpyDeviceToHost);
    for (size_t i = 0; i < sizeof(gathered); ++i) {
      if (gathered[i] != (i < 100 * row ? 1 : 2)) code = LTX_DATA_LOSS;
    }
  }
  for (int r = 0; r < 2; ++r) {
    cudaSetDevice(devices[r]);
    cudaFree((void*)buffers[r].input);
    cudaFree(buffers[r].output);
    cudaStreamDestroy(buffers[r].stream);
  }
  ltx_runtime_destroy(runtime);
  printf("%s\n", code == LTX_OK ? "gathered: PASS" : "gathered: FAIL");
  return code == LTX_OK ? 0 : 1;
}
