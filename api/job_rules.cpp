#include "api/job_rules.h"

#include "api/parameter_schema.h"
#include "engine/core/error.h"
#include "engine/kernels/kernel.h"
#include "engine/training/training_method.h"

#include <algorithm>
#include <span>
#include <string_view>

namespace gpstream {

void check_job_rules(const JobRequest& request) {
  const auto given = [&](const char* name) {
    return std::find(request.given.begin(), request.given.end(), name) != request.given.end();
  };
  if (request.resumed) {
    // The model was learned or given when the job started.
  } else if (request.learn) {
    GPSTREAM_CHECK_ARGUMENT(request.standardise, "`learn_hyper` learns on standardised data: drop `standardise`");
  } else {
    GPSTREAM_CHECK_ARGUMENT(request.kernel != kAutomaticKernel,
                            "`kernel` auto compares kernels by their learned evidence: it needs `learn_hyper`");
    for (const std::string& name : request.given) {
      const Parameter* parameter = find_parameter(name);
      GPSTREAM_CHECK_ARGUMENT(parameter == nullptr || parameter->group != ParameterGroup::learning,
                              "`{}` is an option of learning: it needs `learn_hyper`", name);
    }
  }
  const TrainingMethod* method = find_training_method(request.method);
  if (method == nullptr) return;  // the method's own check names the choices
  if (given("tol") && !method->stops_at_tol()) {
    if (method->stops_at_gap())
      GPSTREAM_THROW_ARGUMENT("`tol` is for the dense solvers and cholqr: {} stops at `gap`", method->name);
    GPSTREAM_THROW_ARGUMENT("`tol` is for the dense solvers and cholqr: `model` {} runs to `basis_size`", method->name);
  }
  GPSTREAM_CHECK_ARGUMENT(!given("gap") || method->stops_at_gap(), "`gap` is for `model` sggp");
  if (!method->dense()) {
    for (const char* name : {"solver", "precision"}) {
      GPSTREAM_CHECK_ARGUMENT(!given(name), "`{}` is for `model` dense; sparse models choose their own", name);
    }
  }
  // A method's own parameters (TrainingMethod::parameters: cholqr's `objective`, online's `passes`) are for it.
  for (const std::string& name : request.given) {
    const std::string takers = methods_taking(name);
    const std::span<const char* const> own = method->parameters;
    const bool ours = std::find(own.begin(), own.end(), std::string_view(name)) != own.end();
    GPSTREAM_CHECK_ARGUMENT(takers.empty() || ours, "`{}` is for `model` {}", name, takers);
  }
}

}  // namespace gpstream
