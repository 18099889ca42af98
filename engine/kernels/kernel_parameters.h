// A kernel's parameters as one vector: every positive value of a kernel —
// each term's lengthscales, s² and its family's own parameters, and the
// noise σ² — in one order, with a name and a kind. The likelihoods'
// gradients, the searches (θ = the logs of these values), their journals
// and checkpoints, model files, hyperparameter files, `info` and Python
// iterate over this layout; none of them unpacks a kernel's fields by
// position, so a family with a parameter of its own (rational quadratic's
// α) needs its file and its registry line, nothing more.
#pragma once

#include "engine/kernels/kernel.h"

#include <cstddef>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace gpstream {

enum class KernelParameterKind { lengthscale, signal_variance, family, noise_variance };

// One entry of the layout: what it is and where it lives.
struct KernelParameter {
  KernelParameterKind kind = KernelParameterKind::signal_variance;
  std::size_t term = 0;   // the term it belongs to (0: the first, and the noise)
  std::size_t index = 0;  // a lengthscale's input, or the place among the family's parameters
};

// The order: the first term's lengthscales, s² and family parameters, then
// σ², then each further term's lengthscales, s² and family parameters (a
// single kernel's noise is its last value).
std::vector<KernelParameter> parameter_layout(const KernelHyperparameters& shape);
// The parameters of one term, in the layout's order (without the noise).
std::vector<KernelParameter> term_layout(const KernelHyperparameters& shape, std::size_t term);

// "lengthscale", "signal_variance", "noise_variance" or the family's name for it ("alpha").
std::string parameter_name(const KernelHyperparameters& shape, const KernelParameter& parameter);
double parameter_value(const KernelHyperparameters& hyperparameters, const KernelParameter& parameter);
void set_parameter_value(KernelHyperparameters& hyperparameters, const KernelParameter& parameter, double value);

// Every value in the layout's order, and back into a kernel of `shape`'s form.
std::vector<double> hyperparameter_values(const KernelHyperparameters& hyperparameters);
KernelHyperparameters with_values(const KernelHyperparameters& shape, std::span<const double> values);
// θ = the logarithms of hyperparameter_values(), and back.
std::vector<double> log_parameters(const KernelHyperparameters& hyperparameters);
KernelHyperparameters with_log_parameters(const KernelHyperparameters& shape, std::span<const double> theta);
// A single kernel of `type` from θ: its family's own parameters and s², σ² last, lengthscales before them.
KernelHyperparameters from_log_parameters(KernelType type, std::span<const double> theta);
// s² of each term, the first term's first.
std::vector<double> signal_variances(const KernelHyperparameters& hyperparameters);

// A kernel's own parameters by name, as `kernel_parameters` gives them ("alpha=2" or "alpha=2,beta=0.5").
using NamedValues = std::vector<std::pair<std::string, double>>;
// Parses "name=value,…" (values positive and finite); InvalidArgument naming the pair at fault.
NamedValues parse_named_values(const std::string& text);
// Sets each named parameter on every term of `hyperparameters` whose family declares it; InvalidArgument
// for a name no term declares (naming the ones the kernel has).
void set_family_parameters(KernelHyperparameters& hyperparameters, const NamedValues& values);

// A term's values as reports write them: "lengthscales 0.5, 0.7; signal var 1.2; alpha 2" (`precision`
// significant digits).
std::string describe_term(const KernelTerm& term, int precision = 6);

}  // namespace gpstream
