// The check every run makes: the scaled residual ‖PA − LU‖₁ / (‖A‖₁·n·ε) of a factorization, A
// rebuilt from its seed (LAPACK's dget01 measure; below 10 for a backward-stable factorization).
//
//   const double residual = lu::scaled_residual(factored, seed, kind);
#pragma once

#include "factorization.hpp"

namespace lu {

double scaled_residual(const Factored& f, std::uint64_t seed, MatrixKind kind);

}  // namespace lu
