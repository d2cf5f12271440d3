// Moved to traces/packing.h (the packed layout is part of the compiler <-> simulator contract).
// This forwarding header remains only for code that still includes it; include traces/packing.h.
#pragma once

#include "traces/packing.h"

namespace ltc::compiler {
using traces::pack_weights;
using traces::PackedWeights;
}  // namespace ltc::compiler
