// Which collective an op belongs to. The host resolves protocols by it, and the devices' error
// records name it, so both sides share this definition.
#ifndef KERNELS_WIRE_COLLECTIVE_H_
#define KERNELS_WIRE_COLLECTIVE_H_

#include <cstdint>

namespace ltx {

enum class Collective : uint32_t {
  kAllGather = 1,
  // The Ulysses all-to-all: every protocol, chosen by its largest piece.
  kAllToAll = 2,
};

}  // namespace ltx

#endif  // KERNELS_WIRE_COLLECTIVE_H_
