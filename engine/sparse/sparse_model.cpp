#include "engine/sparse/sparse_model.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"

#include <algorithm>

namespace gpstream {

std::string sparse_variance_form_name(SparseVarianceForm form) {
  switch (form) {
    case SparseVarianceForm::exact_on_subset:
      return "exact-on-subset";
    case SparseVarianceForm::projected_process:
      return "projected-process";
    case SparseVarianceForm::reduced_rank:
      return "reduced-rank";
    case SparseVarianceForm::online_posterior:
      return "online-posterior";
  }
  return "unknown";
}

SparseVarianceForm parse_sparse_variance_form(const std::string& name) {
  for (SparseVarianceForm form : {SparseVarianceForm::exact_on_subset, SparseVarianceForm::projected_process,
                                  SparseVarianceForm::reduced_rank, SparseVarianceForm::online_posterior}) {
    if (sparse_variance_form_name(form) == name) return form;
  }
  GPSTREAM_THROW("unknown variance form '{}' (exact-on-subset, projected-process, reduced-rank or online-posterior)",
                 name);
}

void validate_sparse_model(const SparseModel& model, const std::string& context) {
  const std::size_t m = model.basis_size();
  GPSTREAM_CHECK(m > 0 && model.columns > 0, "{}: the model has an empty basis", context);
  GPSTREAM_CHECK(model.basis_rows.size() == checked_multiply(m, model.columns),
                 "{}: {} basis values do not make {} rows of {} inputs", context, model.basis_rows.size(), m,
                 model.columns);
  GPSTREAM_CHECK(model.variance_factor.size() == checked_multiply(m, m), "{}: the variance factor is not {} x {}",
                 context, m, m);
  if (model.variance_form == SparseVarianceForm::projected_process ||
      model.variance_form == SparseVarianceForm::reduced_rank) {
    GPSTREAM_CHECK(model.basis_factor.size() == m * m, "{}: the basis factor is not {} x {}", context, m, m);
  }
  if (model.variance_form == SparseVarianceForm::reduced_rank) {
    GPSTREAM_CHECK(model.training_weights.size() == model.rows && model.rows > 0,
                   "{}: {} training weights for {} training rows", context, model.training_weights.size(), model.rows);
  }
  validate_model_description(model, context);
  check_finite_values(model.basis_rows, "/basis_rows", context);
  check_finite_values(model.weights, "/weights", context);
  check_finite_values(model.variance_factor, "/variance_factor", context);
  check_finite_values(model.basis_factor, "/basis_factor", context);
  check_finite_values(model.training_weights, "/training_weights", context);
}

BasisResolution basis_resolution(const KernelHyperparameters& hyperparameters) {
  GPSTREAM_CHECK(hyperparameters.signal_variance > 0 && hyperparameters.noise_variance > 0,
                 "a basis needs positive signal and noise variances, not {} and {}", hyperparameters.signal_variance,
                 hyperparameters.noise_variance);
  const double relative_noise = hyperparameters.noise_variance / hyperparameters.signal_variance;
  const double floor = std::clamp(1e-3 * relative_noise, 1e-9, 1e-6);
  return {.independence_floor = floor, .jitter = 1e-2 * floor * hyperparameters.signal_variance};
}

}  // namespace gpstream
