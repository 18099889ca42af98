#include "engine/kernels/kernel_parameters.h"

#include "engine/core/error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace gpstream {

std::vector<KernelParameter> term_layout(const KernelHyperparameters& shape, std::size_t term) {
  const KernelTerm& values = shape.term(term);
  std::vector<KernelParameter> layout;
  for (std::size_t l = 0; l < values.lengthscales.size(); ++l)
    layout.push_back({KernelParameterKind::lengthscale, term, l});
  layout.push_back({KernelParameterKind::signal_variance, term, 0});
  for (std::size_t f = 0; f < values.family_parameters.size(); ++f)
    layout.push_back({KernelParameterKind::family, term, f});
  return layout;
}

std::vector<KernelParameter> parameter_layout(const KernelHyperparameters& shape) {
  std::vector<KernelParameter> layout = term_layout(shape, 0);
  layout.push_back({KernelParameterKind::noise_variance, 0, 0});
  for (std::size_t t = 1; t < shape.term_count(); ++t) {
    const std::vector<KernelParameter> term = term_layout(shape, t);
    layout.insert(layout.end(), term.begin(), term.end());
  }
  return layout;
}

std::string parameter_name(const KernelHyperparameters& shape, const KernelParameter& parameter) {
  switch (parameter.kind) {
    case KernelParameterKind::lengthscale:
      return "lengthscale";
    case KernelParameterKind::signal_variance:
      return "signal_variance";
    case KernelParameterKind::noise_variance:
      return "noise_variance";
    case KernelParameterKind::family:
      break;
  }
  const auto specs = family_parameter_specs(shape.term(parameter.term).type);
  GPSTREAM_CHECK(parameter.index < specs.size(), "the {} kernel has {} parameters of its own, not {}",
                 kernel_type_name(shape.term(parameter.term).type), specs.size(), parameter.index + 1);
  return specs[parameter.index].name;
}

namespace {

// The value a layout entry names, for reading and writing alike.
template <class Hyperparameters>
auto& value_of(Hyperparameters& h, const KernelParameter& parameter) {
  if (parameter.kind == KernelParameterKind::noise_variance) return h.noise_variance;
  auto& term = h.term(parameter.term);
  switch (parameter.kind) {
    case KernelParameterKind::lengthscale:
      return term.lengthscales.at(parameter.index);
    case KernelParameterKind::family:
      return term.family_parameters.at(parameter.index);
    default:
      return term.signal_variance;
  }
}

}  // namespace

double parameter_value(const KernelHyperparameters& hyperparameters, const KernelParameter& parameter) {
  return value_of(hyperparameters, parameter);
}

void set_parameter_value(KernelHyperparameters& hyperparameters, const KernelParameter& parameter, double value) {
  value_of(hyperparameters, parameter) = value;
}

std::vector<double> hyperparameter_values(const KernelHyperparameters& hyperparameters) {
  std::vector<double> values;
  for (const KernelParameter& parameter : parameter_layout(hyperparameters))
    values.push_back(parameter_value(hyperparameters, parameter));
  return values;
}

KernelHyperparameters with_values(const KernelHyperparameters& shape, std::span<const double> values) {
  const std::vector<KernelParameter> layout = parameter_layout(shape);
  GPSTREAM_CHECK(values.size() == layout.size(), "{} values for a {} kernel of {}", values.size(), kernel_name(shape),
                 layout.size());
  KernelHyperparameters result = shape;
  for (std::size_t k = 0; k < layout.size(); ++k) set_parameter_value(result, layout[k], values[k]);
  return result;
}

std::vector<double> log_parameters(const KernelHyperparameters& hyperparameters) {
  std::vector<double> theta = hyperparameter_values(hyperparameters);
  for (double& value : theta) value = std::log(value);
  return theta;
}

KernelHyperparameters with_log_parameters(const KernelHyperparameters& shape, std::span<const double> theta) {
  std::vector<double> values(theta.begin(), theta.end());
  for (double& value : values) value = std::exp(value);
  return with_values(shape, values);
}

KernelHyperparameters from_log_parameters(KernelType type, std::span<const double> theta) {
  const std::size_t own = family_parameter_specs(type).size();
  GPSTREAM_CHECK(theta.size() >= 2 + own, "a {} kernel needs at least {} parameters, not {}", kernel_type_name(type),
                 2 + own, theta.size());
  KernelHyperparameters shape;
  shape.type = type;
  shape.lengthscales.assign(theta.size() - 2 - own, 1.0);
  shape.family_parameters.assign(own, 1.0);
  return with_log_parameters(shape, theta);
}

std::vector<double> signal_variances(const KernelHyperparameters& hyperparameters) {
  std::vector<double> variances;
  for (std::size_t t = 0; t < hyperparameters.term_count(); ++t)
    variances.push_back(hyperparameters.term(t).signal_variance);
  return variances;
}

NamedValues parse_named_values(const std::string& text) {
  NamedValues values;
  std::size_t start = 0;
  while (start <= text.size() && !text.empty()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string pair = text.substr(start, comma - start);
    const std::size_t equals = pair.find('=');
    GPSTREAM_CHECK_ARGUMENT(equals != std::string::npos && equals > 0,
                            "`kernel_parameters`: \"{}\" is not name=value (e.g. alpha=2)", pair);
    const std::string name = pair.substr(0, equals), number = pair.substr(equals + 1);
    char* end = nullptr;
    const double value = std::strtod(number.c_str(), &end);
    GPSTREAM_CHECK_ARGUMENT(
        !number.empty() && end == number.c_str() + number.size() && std::isfinite(value) && value > 0,
        "`kernel_parameters`: {} must be a positive, finite number, not \"{}\"", name, number);
    values.emplace_back(name, value);
    start = comma + 1;
  }
  return values;
}

void set_family_parameters(KernelHyperparameters& hyperparameters, const NamedValues& values) {
  for (const auto& [name, value] : values) {
    bool found = false;
    std::vector<std::string> declared;  // each name once, for the error (a sum may repeat a family)
    for (std::size_t t = 0; t < hyperparameters.term_count(); ++t) {
      KernelTerm& term = hyperparameters.term(t);
      const auto specs = family_parameter_specs(term.type);
      for (std::size_t f = 0; f < specs.size(); ++f) {
        if (std::find(declared.begin(), declared.end(), specs[f].name) == declared.end())
          declared.emplace_back(specs[f].name);
        if (name != specs[f].name) continue;
        term.family_parameters.at(f) = value;
        found = true;
      }
    }
    GPSTREAM_CHECK_ARGUMENT(found, "`kernel_parameters`: the {} kernel has no parameter {} (its own: {})",
                            kernel_name(hyperparameters), name,
                            declared.empty() ? std::string("none") : fmt::format("{}", fmt::join(declared, ", ")));
  }
}

std::string describe_term(const KernelTerm& term, int precision) {
  std::string text;
  for (std::size_t l = 0; l < term.lengthscales.size(); ++l)
    text += fmt::format("{}{:.{}g}", l == 0 ? "lengthscales " : ", ", term.lengthscales[l], precision);
  if (!text.empty()) text += "; ";
  text += fmt::format("signal var {:.{}g}", term.signal_variance, precision);
  const auto specs = family_parameter_specs(term.type);
  for (std::size_t f = 0; f < term.family_parameters.size() && f < specs.size(); ++f)
    text += fmt::format("; {} {:.{}g}", specs[f].name, term.family_parameters[f], precision);
  return text;
}

}  // namespace gpstream
