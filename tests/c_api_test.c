/* Tests of the C API (ltx/c_api.h) that need no GPU, compiled as C: version, option defaults, code
 * names, NULL and out-of-range arguments (AllGather and all-to-all of one or several tensors, call
 * generation and two-shot threshold), struct_size checks (an older caller's keeps the later fields'
 * defaults), and runtime creation, which fails with FAILED_PRECONDITION and a readable message
 * where no GPU is visible; with GPUs, bad head splits of the all-to-all. */
#include "ltx/c_api.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;

/* Records a failure of `condition`, described by `what`. */
static void Expect(int condition, const char* what) {
  if (!condition) {
    fprintf(stderr, "FAILED: %s\n", what);
    ++failures;
  }
}

/* Expects `code` to be LTX_INVALID_ARGUMENT with a message that contains `needle`. */
static void ExpectInvalid(int code, const char* needle, const char* what) {
  Expect(code == LTX_INVALID_ARGUMENT, what);
  Expect(strstr(ltx_last_error(), "INVALID_ARGUMENT: ") == ltx_last_error(), what);
  Expect(strstr(ltx_last_error(), needle) != NULL, what);
}

static void TestVersionAndCodes(void) {
  Expect(ltx_version() == LTX_VERSION_CODE, "ltx_version() == LTX_VERSION_CODE");
  Expect(strcmp(ltx_code_string(LTX_OK), "OK") == 0, "code string OK");
  Expect(strcmp(ltx_code_string(LTX_INVALID_ARGUMENT), "INVALID_ARGUMENT") == 0,
         "code string INVALID_ARGUMENT");
  Expect(strcmp(ltx_code_string(LTX_DEADLINE_EXCEEDED), "DEADLINE_EXCEEDED") == 0,
         "code string DEADLINE_EXCEEDED");
  Expect(strcmp(ltx_code_string(LTX_FAILED_PRECONDITION), "FAILED_PRECONDITION") == 0,
         "code string FAILED_PRECONDITION");
  Expect(strcmp(ltx_code_string(LTX_UNAUTHENTICATED), "UNAUTHENTICATED") == 0,
         "code string UNAUTHENTICATED");
  Expect(strcmp(ltx_code_string(17), "UNKNOWN_CODE") == 0, "code string 17");
  Expect(strcmp(ltx_code_string(-1), "UNKNOWN_CODE") == 0, "code string -1");
}

static void TestOptionDefaults(void) {
  ltx_runtime_options options;
  ltx_call_options call;
  memset(&options, 0x5a, sizeof(options));
  Expect(ltx_runtime_options_init(&options) == LTX_OK, "runtime options init");
  Expect(ltx_last_error()[0] == '\0', "no message after OK");
  Expect(options.struct_size == sizeof(options), "options struct_size");
  Expect(options.devices == NULL && options.num_devices == 0, "options devices");
  Expect(options.timeout_us == 10000000, "options timeout 10 s");
  Expect(options.max_blocks == 0, "options max_blocks");
  Expect(options.worker_spin_us == 100, "options worker_spin 100 us");
  Expect(options.one_trip_max_bytes == -1, "options one_trip_max_bytes");
  Expect(options.copy_engine_min_bytes == 32 << 20, "options copy_engine_min_bytes");
  Expect(options.transport == LTX_TRANSPORT_AUTO, "options transport");
  Expect(options.two_shot_min_bytes == 1 << 20, "options two_shot_min_bytes 1 MiB");
  Expect(ltx_call_options_init(&call) == LTX_OK, "call options init");
  Expect(call.struct_size == sizeof(call) && call.timeout_us == 0 && call.blocks == 0 &&
             call.protocol == LTX_PROTOCOL_AUTO && call.generation == -1 &&
             call.two_shot_min_bytes == -1 && call.wire == LTX_WIRE_NATIVE,
         "call options defaults");
  Expect(LTX_NEVER_TWO_SHOT == INT64_MAX, "LTX_NEVER_TWO_SHOT");
  ExpectInvalid(ltx_runtime_options_init_sized(NULL, sizeof(options)), "options is NULL",
                "runtime options init NULL");
  ExpectInvalid(ltx_call_options_init_sized(NULL, sizeof(call)), "call is NULL",
                "call options init NULL");
  /* The functions of programs built before 0.10 fill the whole struct. */
  Expect((ltx_runtime_options_init)(&options) == LTX_OK && options.struct_size == sizeof(options),
         "runtime options init, the function");
  Expect((ltx_call_options_init)(&call) == LTX_OK && call.struct_size == sizeof(call),
         "call options init, the function");
}

/* The initialisers fill a caller's struct of an older version and not a byte past it, and refuse
 * a size that is no version's (0.10). */
static void TestSizedInit(void) {
  union {
    ltx_call_options call;
    unsigned char bytes[sizeof(ltx_call_options) + 8];
  } older;
  const size_t before_wire = offsetof(ltx_call_options, wire); /* The 0.7 and 0.8 struct. */
  size_t i;
  int untouched = 1;
  memset(&older, 0x5a, sizeof(older));
  Expect(ltx_call_options_init_sized(&older.call, before_wire) == LTX_OK,
         "call options init of the 0.8 size");
  Expect(older.call.struct_size == before_wire && older.call.generation == -1 &&
             older.call.two_shot_min_bytes == -1,
         "the 0.8 struct holds its defaults and its own size");
  for (i = before_wire; i < sizeof(older); ++i) untouched = untouched && older.bytes[i] == 0x5a;
  Expect(untouched, "no byte past the 0.8 struct written");
  ExpectInvalid(ltx_call_options_init_sized(&older.call, before_wire + 4), "a struct of",
                "call options init of no version's size");
  ExpectInvalid(ltx_runtime_options_init_sized((ltx_runtime_options*)&older, 1000),
                "a newer header", "runtime options init of a newer size");
  Expect(LTX_VERSION_MINOR >= 10, "the sized initialisers are version 0.10");
}

static void TestNullArguments(void) {
  ltx_runtime_options options;
  ltx_runtime* runtime = (ltx_runtime*)1;
  ltx_op* op = NULL;
  int value = 0;
  ltx_runtime_options_init(&options);
  ExpectInvalid(ltx_runtime_create(&options, NULL), "runtime is NULL", "create NULL out");
  ExpectInvalid(ltx_runtime_create(NULL, &runtime), "ltx_runtime_options is NULL",
                "create NULL options");
  Expect(runtime == NULL, "create clears *runtime on error");
  ExpectInvalid(ltx_runtime_destroy(NULL), "runtime is NULL", "destroy NULL");
  ExpectInvalid(ltx_runtime_world_size(NULL, &value), "runtime is NULL", "world_size NULL");
  ExpectInvalid(ltx_runtime_device(NULL, 0, &value), "runtime is NULL", "device NULL");
  ExpectInvalid(ltx_runtime_transport(NULL, &value), "runtime is NULL", "transport NULL");
  ExpectInvalid(ltx_runtime_generation(NULL, NULL), "runtime is NULL", "generation NULL");
  ExpectInvalid(ltx_runtime_generation((const ltx_runtime*)1, NULL), "generation is NULL",
                "generation NULL out");
  ExpectInvalid(ltx_all_gather(NULL, NULL, NULL, 0, NULL, &op), "runtime is NULL",
                "all_gather NULL");
  ExpectInvalid(ltx_all_gather_rank(NULL, 0, NULL, NULL, NULL), "runtime is NULL",
                "all_gather_rank NULL");
  ExpectInvalid(ltx_all_to_all(NULL, NULL, NULL, 0, NULL, &op), "runtime is NULL",
                "all_to_all NULL");
  ExpectInvalid(ltx_all_to_all_rank(NULL, 0, NULL, NULL, NULL), "runtime is NULL",
                "all_to_all_rank NULL");
  ExpectInvalid(ltx_all_reduce(NULL, NULL, NULL, 0, NULL, &op), "runtime is NULL",
                "all_reduce NULL");
  ExpectInvalid(ltx_all_reduce_rank(NULL, 0, NULL, NULL, NULL), "runtime is NULL",
                "all_reduce_rank NULL");
  ExpectInvalid(ltx_reduce_scatter(NULL, NULL, NULL, 0, NULL, &op), "runtime is NULL",
                "reduce_scatter NULL");
  ExpectInvalid(ltx_reduce_scatter_rank(NULL, 0, NULL, NULL, NULL), "runtime is NULL",
                "reduce_scatter_rank NULL");
  ExpectInvalid(ltx_all_reduce_rmsnorm(NULL, NULL, NULL, 0, NULL, &op), "runtime is NULL",
                "all_reduce_rmsnorm NULL");
  ExpectInvalid(ltx_all_reduce_rmsnorm_rank(NULL, 0, NULL, NULL, NULL), "runtime is NULL",
                "all_reduce_rmsnorm_rank NULL");
  ExpectInvalid(ltx_op_wait(NULL, 1000), "op is NULL", "op_wait NULL");
  ExpectInvalid(ltx_op_destroy(NULL), "op is NULL", "op_destroy NULL");
  ExpectInvalid(ltx_runtime_synchronize(NULL, 1000), "runtime is NULL", "synchronize NULL");
  ExpectInvalid(ltx_runtime_status(NULL), "runtime is NULL", "status NULL");
  ExpectInvalid(ltx_runtime_reset(NULL, 1000), "runtime is NULL", "reset NULL");
}

/* Options that ltx_runtime_create must refuse before it looks for GPUs. */
static void TestBadOptions(void) {
  ltx_runtime_options options;
  ltx_runtime* runtime = NULL;
  ltx_runtime_options_init(&options);
  options.struct_size = sizeof(options) + 8;
  ExpectInvalid(ltx_runtime_create(&options, &runtime), "struct_size", "newer struct_size");
  options.struct_size = 0;
  ExpectInvalid(ltx_runtime_create(&options, &runtime), "struct_size", "zero struct_size");
  ltx_runtime_options_init(&options);
  options.transport = 3;
  ExpectInvalid(ltx_runtime_create(&options, &runtime), "options->transport = 3",
                "transport out of range");
  options.transport = -1;
  ExpectInvalid(ltx_runtime_create(&options, &runtime), "options->transport = -1",
                "negative transport");
  ltx_runtime_options_init(&options);
  options.num_devices = 2;
  ExpectInvalid(ltx_runtime_create(&options, &runtime), "options->devices is NULL",
                "devices NULL with num_devices 2");
  options.num_devices = -1;
  ExpectInvalid(ltx_runtime_create(&options, &runtime), "options->devices has -1 entries",
                "negative num_devices");
  ltx_runtime_options_init(&options);
  options.two_shot_min_bytes = -5;
  ExpectInvalid(ltx_runtime_create(&options, &runtime), "two_shot_min_bytes must be >= 0",
                "negative two_shot_min_bytes");
  /* A struct_size that ends inside a field is no version's. */
  ltx_runtime_options_init(&options);
  options.struct_size = offsetof(ltx_runtime_options, two_shot_min_bytes) + 4;
  ExpectInvalid(ltx_runtime_create(&options, &runtime), "struct_size",
                "struct_size inside a field");
  {
    /* More ranks than a Runtime takes, and a negative ordinal: refused as bad arguments, on a
     * machine with GPUs or without. */
    int nine[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    int negative[2] = {0, -1};
    ltx_runtime_options_init(&options);
    options.devices = nine;
    options.num_devices = 9;
    ExpectInvalid(ltx_runtime_create(&options, &runtime), "at most 8 per Runtime", "9 ranks");
    options.devices = negative;
    options.num_devices = 2;
    ExpectInvalid(ltx_runtime_create(&options, &runtime), "devices[1] = -1",
                  "a negative ordinal");
  }
  Expect(runtime == NULL, "no runtime after bad options");
}

/* A caller built against a header before 0.7 passes a struct_size that ends before
 * two_shot_min_bytes: the library keeps the field's default and never reads the bytes after. */
static void TestOlderStructSize(void) {
  ltx_runtime_options options;
  ltx_runtime* runtime = NULL;
  ltx_runtime* bogus = (ltx_runtime*)16;
  int64_t counts[] = {3, 0};
  ltx_allgather_shape shape = {LTX_BFLOAT16, 1, 8, counts, 2};
  ltx_rank_buffers buffers[2];
  ltx_call_options call;
  int code;
  ltx_runtime_options_init(&options);
  options.struct_size = offsetof(ltx_runtime_options, two_shot_min_bytes);
  options.two_shot_min_bytes = -5;
  code = ltx_runtime_create(&options, &runtime);
  Expect(strstr(ltx_last_error(), "two_shot_min_bytes") == NULL,
         "an older options struct_size keeps two_shot_min_bytes' default");
  if (code == LTX_OK) ltx_runtime_destroy(runtime);
  /* The call's two_shot_min_bytes is checked before its generation: with the older struct_size
   * the generation is what the library refuses (the Runtime pointer is never dereferenced). */
  memset(buffers, 0, sizeof(buffers));
  ltx_call_options_init(&call);
  call.two_shot_min_bytes = -2;
  call.generation = -2;
  ExpectInvalid(ltx_all_gather_rank(bogus, 0, &shape, buffers, &call),
                "call->two_shot_min_bytes = -2", "call two_shot_min_bytes -2");
  call.struct_size = offsetof(ltx_call_options, two_shot_min_bytes);
  ExpectInvalid(ltx_all_gather_rank(bogus, 0, &shape, buffers, &call), "call->generation = -2",
                "an older call struct_size keeps two_shot_min_bytes' default");
  call.struct_size = offsetof(ltx_call_options, two_shot_min_bytes) + 4;
  ExpectInvalid(ltx_all_gather_rank(bogus, 0, &shape, buffers, &call), "struct_size",
                "a call struct_size inside a field");
  /* A negative block count is refused before the Runtime is used. */
  ltx_call_options_init(&call);
  call.blocks = -1;
  ExpectInvalid(ltx_all_gather_rank(bogus, 0, &shape, buffers, &call), "call->blocks = -1",
                "negative blocks");
  Expect(LTX_VERSION_MINOR >= 7, "two_shot_min_bytes is version 0.7");
}

/* All-to-all arguments that are refused before the Runtime is used: a NULL shape, op, buffers
 * or token counts, and a direction outside the enum. A non-null bogus Runtime pointer is never
 * dereferenced on these paths. */
static void TestAllToAllArguments(void) {
  ltx_runtime* runtime = (ltx_runtime*)16;
  int64_t counts[] = {3, 0};
  ltx_alltoall_shape shape = {LTX_BFLOAT16, 1, 4, 8, counts, 2, LTX_ALLTOALL_SEQ_TO_HEADS};
  ltx_rank_buffers buffers[2];
  ltx_op* op = (ltx_op*)1;
  memset(buffers, 0, sizeof(buffers));
  ExpectInvalid(ltx_all_to_all(runtime, &shape, buffers, 2, NULL, NULL), "op is NULL",
                "all_to_all NULL op");
  ExpectInvalid(ltx_all_to_all(runtime, &shape, NULL, 2, NULL, &op), "buffers is NULL",
                "all_to_all NULL buffers");
  Expect(op == NULL, "all_to_all clears *op on every error, before checking the buffers too");
  op = (ltx_op*)1;
  ExpectInvalid(ltx_all_to_all(NULL, &shape, buffers, 2, NULL, &op), "runtime is NULL",
                "all_to_all NULL runtime");
  Expect(op == NULL, "all_to_all clears *op when the runtime is NULL");
  op = (ltx_op*)1;
  ExpectInvalid(ltx_all_to_all(runtime, NULL, buffers, 2, NULL, &op), "shape is NULL",
                "all_to_all NULL shape");
  Expect(op == NULL, "all_to_all clears *op on error");
  ExpectInvalid(ltx_all_to_all_rank(runtime, 0, &shape, NULL, NULL), "buffers is NULL",
                "all_to_all_rank NULL buffers");
  ExpectInvalid(ltx_all_to_all_rank(runtime, 0, NULL, buffers, NULL), "shape is NULL",
                "all_to_all_rank NULL shape");
  shape.token_counts = NULL;
  ExpectInvalid(ltx_all_to_all_rank(runtime, 0, &shape, buffers, NULL),
                "shape->token_counts is NULL", "all_to_all_rank NULL counts");
  shape.token_counts = counts;
  shape.direction = 2;
  ExpectInvalid(ltx_all_to_all(runtime, &shape, buffers, 2, NULL, &op), "shape->direction = 2",
                "all_to_all direction out of range");
  shape.direction = -1;
  ExpectInvalid(ltx_all_to_all_rank(runtime, 0, &shape, buffers, NULL), "shape->direction = -1",
                "all_to_all_rank negative direction");
  Expect(LTX_ALLTOALL_SEQ_TO_HEADS == 0 && LTX_ALLTOALL_HEADS_TO_SEQ == 1, "direction values");
  Expect(LTX_VERSION_MINOR >= 2, "all-to-all entry points are version 0.2");
  Expect(shape.head_counts == NULL, "fields left out of an initialiser: the even split");
  Expect(LTX_VERSION_MINOR >= 4, "head_counts is version 0.4");
}

/* With a Runtime of `world_size` ranks: a coordinated all-to-all with a head split of the wrong
 * sum or with a negative entry is refused by name before any launch (the buffers are never
 * looked at), and the Runtime stays usable. */
static void TestHeadCounts(ltx_runtime* runtime, int world_size) {
  int64_t counts[8] = {0};
  int64_t head_counts[8] = {0};
  ltx_rank_buffers buffers[8];
  ltx_op* op = NULL;
  ltx_alltoall_shape shape = {LTX_BFLOAT16, 1, 3, 8, counts, world_size, LTX_ALLTOALL_SEQ_TO_HEADS,
                              head_counts};
  memset(buffers, 0, sizeof(buffers));
  head_counts[world_size - 1] = 2;
  ExpectInvalid(ltx_all_to_all(runtime, &shape, buffers, world_size, NULL, &op),
                "must sum to heads (3)", "head_counts of the wrong sum");
  head_counts[0] = -1;
  head_counts[world_size - 1] = 4;
  if (world_size > 1) {
    ExpectInvalid(ltx_all_to_all(runtime, &shape, buffers, world_size, NULL, &op),
                  "head_counts[0] = -1 is negative", "negative head_counts entry");
  }
  Expect(op == NULL, "no op after a refused head split");
}

/* Calls of several tensors: NULL pointers and a tensor count outside [1, LTX_MAX_TENSORS] are
 * refused before the Runtime is used (a non-null bogus Runtime pointer is never dereferenced on
 * these paths). */
static void TestTensorsArguments(void) {
  ltx_runtime* runtime = (ltx_runtime*)16;
  int64_t counts[] = {3, 0};
  ltx_allgather_shape gather = {LTX_BFLOAT16, 1, 8, counts, 2};
  ltx_alltoall_shape a2a = {LTX_BFLOAT16, 1, 4, 8, counts, 2, LTX_ALLTOALL_SEQ_TO_HEADS};
  ltx_tensor_buffers buffers[2];
  ltx_op* op = (ltx_op*)1;
  memset(buffers, 0, sizeof(buffers));
  Expect(LTX_MAX_TENSORS == 4, "LTX_MAX_TENSORS");
  ExpectInvalid(ltx_all_gather_tensors(NULL, &gather, 3, buffers, 2, NULL, &op),
                "runtime is NULL", "all_gather_tensors NULL runtime");
  ExpectInvalid(ltx_all_gather_tensors(runtime, &gather, 3, buffers, 2, NULL, NULL), "op is NULL",
                "all_gather_tensors NULL op");
  ExpectInvalid(ltx_all_gather_tensors(runtime, &gather, 3, NULL, 2, NULL, &op),
                "buffers is NULL", "all_gather_tensors NULL buffers");
  ExpectInvalid(ltx_all_gather_tensors(runtime, NULL, 3, buffers, 2, NULL, &op), "shape is NULL",
                "all_gather_tensors NULL shape");
  Expect(op == NULL, "all_gather_tensors clears *op on error");
  ExpectInvalid(ltx_all_gather_tensors(runtime, &gather, 0, buffers, 2, NULL, &op),
                "num_tensors = 0 is outside [1, 4]", "all_gather_tensors 0 tensors");
  ExpectInvalid(ltx_all_gather_tensors_rank(runtime, 0, &gather, 5, buffers, NULL),
                "num_tensors = 5 is outside [1, 4]", "all_gather_tensors_rank 5 tensors");
  ExpectInvalid(ltx_all_gather_tensors_rank(runtime, 0, &gather, 2, NULL, NULL),
                "buffers is NULL", "all_gather_tensors_rank NULL buffers");
  ExpectInvalid(ltx_all_to_all_tensors(runtime, &a2a, -1, buffers, 2, NULL, &op),
                "num_tensors = -1 is outside [1, 4]", "all_to_all_tensors -1 tensors");
  ExpectInvalid(ltx_all_to_all_tensors_rank(NULL, 0, &a2a, 2, buffers, NULL), "runtime is NULL",
                "all_to_all_tensors_rank NULL runtime");
  ExpectInvalid(ltx_all_to_all_tensors_rank(runtime, 0, NULL, 4, buffers, NULL), "shape is NULL",
                "all_to_all_tensors_rank NULL shape");
  a2a.direction = 2;
  ExpectInvalid(ltx_all_to_all_tensors_rank(runtime, 0, &a2a, 4, buffers, NULL),
                "shape->direction = 2", "all_to_all_tensors_rank direction out of range");
  Expect(LTX_VERSION_MINOR >= 7, "the calls of several tensors are version 0.7");
}

/* A call generation below -1 is refused before the Runtime is used (a non-null bogus Runtime
 * pointer is never dereferenced on this path); -1 is the default. */
static void TestCallGeneration(void) {
  ltx_runtime* runtime = (ltx_runtime*)16;
  int64_t counts[] = {3, 0};
  ltx_allgather_shape shape = {LTX_BFLOAT16, 1, 8, counts, 2};
  ltx_rank_buffers buffers[2];
  ltx_call_options call;
  ltx_op* op = (ltx_op*)1;
  memset(buffers, 0, sizeof(buffers));
  ltx_call_options_init(&call);
  call.generation = -2;
  ExpectInvalid(ltx_all_gather_rank(runtime, 0, &shape, buffers, &call), "call->generation = -2",
                "all_gather_rank generation -2");
  ExpectInvalid(ltx_all_gather(runtime, &shape, buffers, 2, &call, &op), "call->generation = -2",
                "all_gather generation -2");
  Expect(op == NULL, "all_gather clears *op on a bad generation");
  Expect(LTX_VERSION_MINOR >= 3, "the call generation is version 0.3");
}

/* Without a GPU: FAILED_PRECONDITION with a message. With GPUs: a Runtime whose queries work. */
static void TestCreate(void) {
  ltx_runtime_options options;
  ltx_runtime* runtime = NULL;
  int code;
  ltx_runtime_options_init(&options);
  code = ltx_runtime_create(&options, &runtime);
  if (code == LTX_OK) {
    int world_size = 0;
    int device = -1;
    printf("create: a Runtime over the visible GPUs\n");
    Expect(ltx_runtime_world_size(runtime, &world_size) == LTX_OK && world_size >= 1, "world size");
    Expect(ltx_runtime_device(runtime, 0, &device) == LTX_OK && device >= 0, "device of rank 0");
    ExpectInvalid(ltx_runtime_device(runtime, world_size, &device), "outside",
                  "device of a rank past the end");
    Expect(ltx_runtime_status(runtime) == LTX_OK, "status OK");
    if (world_size <= 8) TestHeadCounts(runtime, world_size);
    Expect(ltx_runtime_status(runtime) == LTX_OK, "status OK after refused calls");
    Expect(ltx_runtime_destroy(runtime) == LTX_OK, "destroy");
    return;
  }
  printf("create: %s\n", ltx_last_error());
  Expect(code == LTX_FAILED_PRECONDITION, "create without GPU: FAILED_PRECONDITION");
  Expect(strstr(ltx_last_error(), "FAILED_PRECONDITION: ") == ltx_last_error(),
         "create without GPU: message starts with the code");
  Expect(strlen(ltx_last_error()) > strlen("FAILED_PRECONDITION: ") + 10,
         "create without GPU: message says why");
  Expect(runtime == NULL, "create without GPU: *runtime is NULL");
}

/* The call's wire format (0.9): an unknown value, and FP8 on a collective other than the
 * AllGather and the all-to-all, are refused before the Runtime is used. */
static void TestWireFormat(void) {
  ltx_runtime* bogus = (ltx_runtime*)16;
  int64_t counts[] = {3, 0};
  ltx_allgather_shape gather = {LTX_BFLOAT16, 1, 8, counts, 2};
  ltx_allreduce_shape reduce = {LTX_BFLOAT16, 64, LTX_REDUCE_SUM};
  ltx_rank_buffers buffers;
  ltx_call_options call;
  memset(&buffers, 0, sizeof(buffers));
  ltx_call_options_init(&call);
  call.wire = 7;
  ExpectInvalid(ltx_all_gather_rank(bogus, 0, &gather, &buffers, &call), "call->wire = 7",
                "an unknown wire format");
  call.wire = LTX_WIRE_FP8_E4M3;
  ExpectInvalid(ltx_all_reduce_rank(bogus, 0, &reduce, &buffers, &call),
                "only an AllGather or an all-to-all", "FP8 on the AllReduce");
  Expect(LTX_VERSION_MINOR >= 9, "the wire format is version 0.9");
}

/* ltx_runtime_stop (0.10) refuses a NULL runtime or message and a code that is no error before it
 * uses the Runtime (a non-null bogus Runtime pointer is never dereferenced on these paths). */
static void TestStopArguments(void) {
  ltx_runtime* bogus = (ltx_runtime*)16;
  ExpectInvalid(ltx_runtime_stop(NULL, LTX_ABORTED, "step given up"), "runtime is NULL",
                "stop NULL runtime");
  ExpectInvalid(ltx_runtime_stop(bogus, LTX_ABORTED, NULL), "message is NULL",
                "stop NULL message");
  ExpectInvalid(ltx_runtime_stop(bogus, LTX_OK, "ok"), "code = 0", "stop with LTX_OK");
  ExpectInvalid(ltx_runtime_stop(bogus, 17, "beyond"), "code = 17", "stop with code 17");
  Expect(LTX_VERSION_MINOR >= 10, "ltx_runtime_stop is version 0.10");
}

int main(void) {
  TestVersionAndCodes();
  TestStopArguments();
  TestSizedInit();
  TestOptionDefaults();
  TestNullArguments();
  TestBadOptions();
  TestOlderStructSize();
  TestAllToAllArguments();
  TestTensorsArguments();
  TestCallGeneration();
  TestWireFormat();
  TestCreate();
  if (failures > 0) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("PASS\n");
  return 0;
}
