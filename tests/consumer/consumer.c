/* A program that uses an installed ltx through its C API, built by make (pkg-config) and by
 * CMake (find_package) in the tests. It prints the version and tries to create a Runtime over
 * every visible GPU: exit 0 when that works or fails only because there is no GPU. */
#include <ltx/c_api.h>
#include <stdio.h>

int main(void) {
  ltx_runtime_options options;
  ltx_runtime* runtime = NULL;
  int code;
  printf("ltx %d (header %d)\n", ltx_version(), LTX_VERSION_CODE);
  ltx_runtime_options_init(&options);
  code = ltx_runtime_create(&options, &runtime);
  if (code != LTX_OK) {
    printf("create: %s\n", ltx_last_error());
    return code == LTX_FAILED_PRECONDITION ? 0 : 1;
  }
  printf("create: OK\n");
  return ltx_runtime_destroy(runtime) == LTX_OK ? 0 : 1;
}
