// Early-return helpers for absl::Status and absl::StatusOr, in the usual Abseil-family shape.
#ifndef LTX_STATUS_MACROS_H_
#define LTX_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Returns from the enclosing function with the status of `expr` unless it is OK.
#define LTX_RETURN_IF_ERROR(expr)              \
  do {                                         \
    const ::absl::Status ltx_status_ = (expr); \
    if (!ltx_status_.ok()) return ltx_status_; \
  } while (false)

#define LTX_STATUS_CONCAT_INNER_(a, b) a##b
#define LTX_STATUS_CONCAT_(a, b) LTX_STATUS_CONCAT_INNER_(a, b)

// Evaluates `rexpr` (an absl::StatusOr<T>); returns its status on error, else moves the value
// into `lhs` (a declaration such as `auto x` or an existing variable).
#define LTX_ASSIGN_OR_RETURN(lhs, rexpr) \
  LTX_ASSIGN_OR_RETURN_IMPL_(LTX_STATUS_CONCAT_(ltx_statusor_, __LINE__), lhs, rexpr)
#define LTX_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                               \
  if (!statusor.ok()) return statusor.status();          \
  lhs = std::move(statusor).value()

#endif  // LTX_STATUS_MACROS_H_
