// ProgressiveFilling: weighted max-min sharing of constraints among variables, by progressive filling
// (SimGrid's linear max-min model, Casanova et al., "Versatile, scalable, and accurate simulation of
// distributed applications and platforms", §4). Every variable grows with one level at its own
// speed, up to its bound; a constraint whose capacity is used up fixes the variables that use it.
// The engine's "cpu_per": "byte" rule solves the hosts' cores and the star's links at once with it:
// steps use a core each at most, transfers use their links and, per byte, the CPU at both ends.
//
//   ProgressiveFilling pf;
//   const auto core = pf.constraint(1.0), link = pf.constraint(1e8);
//   const auto step = pf.variable(1.0, 1.0);                 // a step: up to one core
//   pf.use(step, core, 1.0);
//   const auto flow = pf.variable(2e8, ProgressiveFilling::kUnbounded);
//   pf.use(flow, link, 1.0);
//   pf.use(flow, core, 1e-8);                                // a core at 10^8 bytes per second
//   pf.solve();                                              // pf.value(step) == 1/3, pf.value(flow) == 2/3 · 10^8
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace dps::sim {

class ProgressiveFilling {
 public:
  using Id = std::uint32_t;
  static constexpr double kUnbounded = std::numeric_limits<double>::infinity();

  // Empties the system, keeping its memory.
  void clear() {
    constraints_.clear();
    variables_.clear();
    uses_.clear();
  }
  Id constraint(double capacity) {
    constraints_.push_back({capacity});
    return static_cast<Id>(constraints_.size() - 1);
  }
  // A variable worth `speed` per unit of the level, and never more than `bound`.
  Id variable(double speed, double bound) {
    variables_.push_back({speed, bound});
    return static_cast<Id>(variables_.size() - 1);
  }
  // Each unit of the variable uses `coefficient` of the constraint's capacity (none: no use).
  void use(Id variable, Id constraint, double coefficient) {
    if (coefficient > 0) uses_.push_back({variable, constraint, coefficient});
  }

  // Every variable's value; one that nothing limits is unbounded.
  void solve() {
    index();
    for (const Use& u : uses_) {
      constraints_[u.constraint].rate += u.coefficient * variables_[u.variable].speed;
      ++constraints_[u.constraint].unfixed;
    }
    std::size_t unfixed = variables_.size();
    while (unfixed > 0) {
      // The level's next step: the first constraint used up, or the first variable at its bound.
      double step = kUnbounded;
      for (const Constraint& c : constraints_)
        if (c.unfixed > 0 && c.rate > 0) step = std::min(step, std::max(0.0, c.capacity - c.used) / c.rate);
      for (const Variable& v : variables_)
        if (!v.fixed && v.bound < kUnbounded) step = std::min(step, std::max(0.0, v.bound - v.value) / v.speed);
      if (step == kUnbounded) {  // what is left uses nothing that runs out
        for (Variable& v : variables_)
          if (!v.fixed) v.value = kUnbounded;
        break;
      }
      for (Variable& v : variables_)
        if (!v.fixed) v.value += step * v.speed;
      for (Constraint& c : constraints_)
        if (c.unfixed > 0) c.used += step * c.rate;
      for (Id v = 0; v < variables_.size(); ++v)
        if (!variables_[v].fixed && variables_[v].value >= variables_[v].bound * (1 - kSlack)) unfixed -= fix(v);
      for (Constraint& c : constraints_)
        if (c.unfixed > 0 && c.rate > 0 && c.used >= c.capacity * (1 - kSlack))
          for (std::uint32_t k = c.first; k < c.last && c.unfixed > 0; ++k) unfixed -= fix(by_constraint_[k]);
    }
  }

  double value(Id variable) const { return variables_[variable].value; }
  double used(Id constraint) const { return constraints_[constraint].used; }

 private:
  static constexpr double kSlack = 1e-12;  // relative: a step's rounding must not leave a sliver to fill

  struct Constraint {
    double capacity;
    double used = 0, rate = 0;   // rate: what the unfixed variables add to `used` per unit of the level
    std::uint32_t unfixed = 0;   // its uses by variables not fixed yet
    std::uint32_t first = 0, last = 0;  // its variables in by_constraint_
  };
  struct Variable {
    double speed, bound;
    double value = 0;
    bool fixed = false;
    std::uint32_t first = 0, last = 0;  // its uses in by_variable_
  };
  struct Use {
    Id variable, constraint;
    double coefficient;
  };

  // A new solution: the uses grouped by variable and by constraint (counting sorts), nothing filled.
  void index() {
    for (Constraint& c : constraints_) c = Constraint{c.capacity};
    for (Variable& v : variables_) v = Variable{v.speed, v.bound};
    for (const Use& u : uses_) ++constraints_[u.constraint].last, ++variables_[u.variable].last;
    std::uint32_t at = 0;
    for (Constraint& c : constraints_) c.first = at, at += c.last, c.last = c.first;
    at = 0;
    for (Variable& v : variables_) v.first = at, at += v.last, v.last = v.first;
    by_constraint_.resize(uses_.size());
    by_variable_.resize(uses_.size());
    for (std::uint32_t k = 0; k < uses_.size(); ++k) {
      by_constraint_[constraints_[uses_[k].constraint].last++] = uses_[k].variable;
      by_variable_[variables_[uses_[k].variable].last++] = k;
    }
  }

  // 1 if it was not fixed yet.
  std::size_t fix(Id v) {
    Variable& var = variables_[v];
    if (var.fixed) return 0;
    var.fixed = true;
    for (std::uint32_t k = var.first; k < var.last; ++k) {
      const Use& u = uses_[by_variable_[k]];
      Constraint& c = constraints_[u.constraint];
      c.rate = --c.unfixed > 0 ? c.rate - u.coefficient * var.speed : 0.0;
    }
    return 1;
  }

  std::vector<Constraint> constraints_;
  std::vector<Variable> variables_;
  std::vector<Use> uses_;
  std::vector<Id> by_constraint_;        // variables, a constraint's together
  std::vector<std::uint32_t> by_variable_;  // uses, a variable's together
};

}  // namespace dps::sim
