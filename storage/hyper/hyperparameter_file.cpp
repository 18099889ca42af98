#include "storage/hyper/hyperparameter_file.h"

#include "engine/core/error.h"
#include "storage/output/atomic_output_file.h"

#include <nlohmann/json.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <unordered_map>

namespace gpstream {
namespace {

using Json = nlohmann::json;

// Each field read through these: an error names the file, the field (within its block) and what it needs,
// never the JSON library's own words.
const Json& field(const Json& object, const std::string& key, const std::string& where) {
  GPSTREAM_CHECK(object.is_object(), "{}: expected an object of fields", where);
  GPSTREAM_CHECK(object.contains(key), "{}: field \"{}\" is missing", where, key);
  return object.at(key);
}

double number(const Json& object, const std::string& key, const std::string& where) {
  const Json& value = field(object, key, where);
  GPSTREAM_CHECK(value.is_number(), "{}: field \"{}\" must be a number, not {}", where, key, value.dump());
  return value.get<double>();
}

std::string text(const Json& object, const std::string& key, const std::string& where) {
  const Json& value = field(object, key, where);
  GPSTREAM_CHECK(value.is_string(), "{}: field \"{}\" must be a string, not {}", where, key, value.dump());
  return value.get<std::string>();
}

std::vector<double> numbers(const Json& object, const std::string& key, const std::string& where) {
  const Json& value = field(object, key, where);
  if (value.is_number()) return {value.get<double>()};
  GPSTREAM_CHECK(value.is_array(), "{}: field \"{}\" must be a list of numbers, not {}", where, key, value.dump());
  std::vector<double> result;
  for (const Json& item : value) {
    GPSTREAM_CHECK(item.is_number(), "{}: field \"{}\" must be a list of numbers; it holds {}", where, key,
                   item.dump());
    result.push_back(item.get<double>());
  }
  return result;
}

std::vector<std::string> strings(const Json& object, const std::string& key, const std::string& where) {
  const Json& value = field(object, key, where);
  GPSTREAM_CHECK(value.is_array(), "{}: field \"{}\" must be a list of strings, not {}", where, key, value.dump());
  std::vector<std::string> result;
  for (const Json& item : value) {
    GPSTREAM_CHECK(item.is_string(), "{}: field \"{}\" must be a list of strings; it holds {}", where, key,
                   item.dump());
    result.push_back(item.get<std::string>());
  }
  return result;
}

std::vector<std::size_t> indices(const Json& object, const std::string& key, const std::string& where) {
  const Json& value = field(object, key, where);
  GPSTREAM_CHECK(value.is_array(), "{}: field \"{}\" must be a list of input indices, not {}", where, key,
                 value.dump());
  std::vector<std::size_t> result;
  for (const Json& item : value) {
    GPSTREAM_CHECK(item.is_number_unsigned(), "{}: field \"{}\" must be a list of input indices (whole numbers from "
                   "0); it holds {}", where, key, item.dump());
    result.push_back(item.get<std::size_t>());
  }
  return result;
}

bool flag(const Json& object, const std::string& key, const std::string& where) {
  const Json& value = field(object, key, where);
  GPSTREAM_CHECK(value.is_boolean(), "{}: field \"{}\" must be true or false, not {}", where, key, value.dump());
  return value.get<bool>();
}

// A kernel's lengthscales, from "length_scales" or "gamma" (γ = 1/(2ℓ²)); both given must agree.
std::vector<double> lengthscales_of(const Json& object, const std::string& where) {
  const bool has_lengthscales = object.contains("length_scales"), has_gamma = object.contains("gamma");
  GPSTREAM_CHECK(has_lengthscales || has_gamma, "{}: needs \"length_scales\" or \"gamma\"", where);
  std::vector<double> from_gamma;
  if (has_gamma) {
    for (const double gamma : numbers(object, "gamma", where)) {
      GPSTREAM_CHECK(gamma > 0.0, "{}: gamma values must be positive, not {}", where, gamma);
      from_gamma.push_back(lengthscale_from_gamma(gamma));
    }
  }
  if (!has_lengthscales) return from_gamma;
  std::vector<double> lengthscales = numbers(object, "length_scales", where);
  if (has_gamma) {
    bool agree = from_gamma.size() == lengthscales.size();
    for (std::size_t l = 0; agree && l < lengthscales.size(); ++l) {
      agree = std::abs(from_gamma[l] - lengthscales[l]) <= 1e-6 * std::abs(lengthscales[l]);
    }
    GPSTREAM_CHECK(agree,
                   "{}: \"length_scales\" and \"gamma\" disagree (gamma = 1/(2 length_scale^2)); give one of them",
                   where);
  }
  return lengthscales;
}

HyperparameterFile read_hyperparameters(const Json& json, const std::string& path);

// A term's own family parameters, each under its name ("alpha"); one not given keeps its declared start.
void family_parameters_of(const Json& object, const std::string& where, KernelTerm& term) {
  const auto specs = family_parameter_specs(term.type);
  for (std::size_t f = 0; f < specs.size(); ++f) {
    if (!object.contains(specs[f].name)) continue;
    const double value = number(object, specs[f].name, where);
    GPSTREAM_CHECK(std::isfinite(value) && value > 0, "{}: \"{}\" must be positive, not {}", where, specs[f].name,
                   value);
    term.family_parameters[f] = value;
  }
}

// A term's own family parameters under their names.
void write_family_parameters(const KernelTerm& term, nlohmann::ordered_json& object) {
  const auto specs = family_parameter_specs(term.type);
  for (std::size_t f = 0; f < specs.size(); ++f) object[specs[f].name] = term.family_parameters.at(f);
}

}  // namespace

HyperparameterFile read_hyperparameter_file(const std::string& path) {
  std::error_code ignored;
  GPSTREAM_CHECK(!std::filesystem::is_directory(path, ignored), "'{}' is a directory, not a hyperparameter file", path);
  std::ifstream stream(path);
  GPSTREAM_CHECK(stream.good(), "cannot read hyperparameter file '{}'", path);
  Json json;
  try {
    json = Json::parse(stream);
  } catch (const Json::parse_error& error) {
    // The library's text says where: "parse error at line 3, column 5: ...".
    const std::string what = error.what();
    const std::size_t at = what.find("parse error");
    GPSTREAM_THROW("{}: not JSON ({})", path, at == std::string::npos ? what : what.substr(at));
  } catch (const Json::exception& error) {
    GPSTREAM_THROW("{}: not a valid hyperparameter file ({})", path, error.what());
  } catch (const std::ios_base::failure& error) {
    GPSTREAM_THROW("cannot read hyperparameter file '{}': {}", path, error.what());
  }
  return read_hyperparameters(json, path);
}

namespace {

HyperparameterFile read_hyperparameters(const Json& json, const std::string& path) {
  GPSTREAM_CHECK(json.is_object(), "{}: expected a JSON object", path);

  HyperparameterFile file;
  KernelHyperparameters& hyper = file.prior.kernel;
  if (json.contains("kernel_name")) {
    const std::string name = text(json, "kernel_name", path);
    try {
      hyper = parse_kernel_shape(name);
    } catch (const Error& error) {
      GPSTREAM_THROW("{}: field \"kernel_name\": {}", path, error.what());
    }
  }
  hyper.signal_variance = number(json, "signal_variance", path);
  hyper.noise_variance = number(json, "noise_variance", path);
  if (default_lengthscale_count(hyper.type, 1) == 0) {
    GPSTREAM_CHECK(!json.contains("length_scales") || json.at("length_scales").empty(),
                   "{}: the {} kernel has no lengthscales", path, kernel_type_name(hyper.type));
  } else {
    hyper.lengthscales = lengthscales_of(json, path);
  }
  family_parameters_of(json, path, hyper);
  const std::size_t added = hyper.term_count() - 1;
  if (added > 0) {  // a sum's further terms: [{"kernel_name", "length_scales", "signal_variance"}, …]
    GPSTREAM_CHECK(json.contains("added_terms"),
                   "{}: the kernel {} is a sum of {} terms: field \"added_terms\" (the terms after the first: "
                   "their \"kernel_name\", \"length_scales\" and \"signal_variance\") is missing",
                   path, kernel_name(hyper), added + 1);
    const Json& terms = json.at("added_terms");
    GPSTREAM_CHECK(terms.is_array() && terms.size() == added,
                   "{}: the kernel {} needs \"added_terms\" to be a list of {} terms", path, kernel_name(hyper), added);
    for (std::size_t t = 0; t < terms.size(); ++t) {
      const std::string where = fmt::format("{}: added_terms[{}]", path, t);
      KernelTerm& term = hyper.term(t + 1);
      if (terms[t].contains("kernel_name")) {
        const std::string name = text(terms[t], "kernel_name", where);
        GPSTREAM_CHECK(name == kernel_type_name(term.type),
                       "{}: \"kernel_name\" is {}, but the sum {} has {} as term {}", where, name, kernel_name(hyper),
                       kernel_type_name(term.type), t + 2);
      }
      term.lengthscales = lengthscales_of(terms[t], where);
      term.signal_variance = number(terms[t], "signal_variance", where);
      family_parameters_of(terms[t], where, term);
    }
  } else {
    GPSTREAM_CHECK(!json.contains("added_terms") || json.at("added_terms").empty(),
                   "{}: field \"added_terms\" is for a sum of kernels, but \"kernel_name\" is {}", path,
                   kernel_name(hyper));
  }
  if (json.contains("input_names")) file.input_names = strings(json, "input_names", path);
  if (json.contains("standardisation")) {
    const std::string where = path + ": standardisation";
    const Json& s = json.at("standardisation");
    Standardisation standardisation;
    standardisation.x_mean = numbers(s, "x_mean", where);
    standardisation.x_std = numbers(s, "x_std", where);
    standardisation.y_mean = number(s, "y_mean", where);
    standardisation.y_std = number(s, "y_std", where);
    GPSTREAM_CHECK(standardisation.x_mean.size() == standardisation.x_std.size(),
                   "{}: {} means but {} standard deviations", where, standardisation.x_mean.size(),
                   standardisation.x_std.size());
    standardisation.validate(where);
    for (std::size_t l = 0; l < standardisation.x_std.size(); ++l) {
      GPSTREAM_CHECK(standardisation.x_std[l] > 0, "{}: x_std of input {} is {}: a scale must be positive", where,
                     l + 1, standardisation.x_std[l]);
    }
    GPSTREAM_CHECK(standardisation.y_std > 0, "{}: y_std is {}: a scale must be positive", where,
                   standardisation.y_std);
    GPSTREAM_CHECK(file.input_names.empty() || file.input_names.size() == standardisation.x_mean.size(),
                   "{}: {} input names but {} inputs", where, file.input_names.size(), standardisation.x_mean.size());
    file.standardisation = std::move(standardisation);
  }
  if (json.contains("mean")) {  // the prior mean of the standardised target, with its fitted coefficients
    const std::string where = path + ": mean";
    const Json& m = json.at("mean");
    MeanFunction& mean = file.prior.mean;
    mean.intercept = flag(m, "intercept", where);
    mean.inputs = indices(m, "inputs", where);
    mean.coefficients = numbers(m, "coefficients", where);
    // Checked against the inputs here when the file says how many; else against the dataset's (match_inputs).
    if (file.standardisation) mean.validate(file.standardisation->x_mean.size(), where);
  }
  return file;
}

// `values` (one per input of the file, in its order) in the dataset's order: `file_column[j]` is the
// dataset's column of the file's input j.
std::vector<double> reordered(const std::vector<double>& values, const std::vector<std::size_t>& file_column) {
  if (values.size() != file_column.size()) return values;  // one isotropic lengthscale, or none
  std::vector<double> out(values.size());
  for (std::size_t j = 0; j < values.size(); ++j) out[file_column[j]] = values[j];
  return out;
}

}  // namespace

std::string match_inputs(HyperparameterFile& file, const std::vector<std::string>& names, const std::string& path,
                         const std::string& dataset) {
  if (file.input_names.empty()) {
    const std::size_t inputs = file.standardisation ? file.standardisation->x_mean.size() : names.size();
    GPSTREAM_CHECK(inputs == names.size(), "'{}' was learned on {} inputs, but '{}' has {}", path, inputs, dataset,
                   names.size());
    file.prior.mean.validate(names.size(), path + ": mean");
    // Lengthscales of another count are the caller's to refuse (with the kernel's own rule); only values that
    // fit the inputs in order are said to be applied so.
    const auto fits = [&](const std::vector<double>& lengthscales) {
      return lengthscales.size() <= 1 || lengthscales.size() == names.size();
    };
    bool every_term_fits = fits(file.prior.kernel.lengthscales);
    for (std::size_t t = 1; t < file.prior.kernel.term_count(); ++t)
      every_term_fits = every_term_fits && fits(file.prior.kernel.term(t).lengthscales);
    if (!every_term_fits || names.size() == 1) return "";
    return fmt::format("'{}' does not name its inputs: its values are applied to the inputs of '{}' in order ({})",
                       path, dataset, fmt::join(names, ", "));
  }
  std::unordered_map<std::string_view, std::size_t> column_of;
  column_of.reserve(names.size());
  for (std::size_t l = 0; l < names.size(); ++l) column_of.emplace(names[l], l);
  std::vector<std::size_t> file_column;
  std::vector<std::string> missing;
  for (const std::string& name : file.input_names) {
    const auto found = column_of.find(name);
    if (found == column_of.end()) {
      missing.push_back(name);
    } else {
      file_column.push_back(found->second);
    }
  }
  GPSTREAM_CHECK(missing.empty(), "'{}' was learned on inputs that '{}' does not have: {}", path, dataset,
                 fmt::join(missing, ", "));
  GPSTREAM_CHECK(file.input_names.size() == names.size(),
                 "'{}' was learned on {} inputs ({}), but '{}' has {}; learn hyperparameters for this dataset with "
                 "gpstream hyper",
                 path, file.input_names.size(), fmt::join(file.input_names, ", "), dataset, names.size());
  KernelHyperparameters& kernel = file.prior.kernel;
  for (std::size_t t = 0; t < kernel.term_count(); ++t)
    kernel.term(t).lengthscales = reordered(kernel.term(t).lengthscales, file_column);
  if (file.standardisation) {
    file.standardisation->x_mean = reordered(file.standardisation->x_mean, file_column);
    file.standardisation->x_std = reordered(file.standardisation->x_std, file_column);
  }
  file.prior.mean.validate(names.size(), path + ": mean");
  for (std::size_t& input : file.prior.mean.inputs) input = file_column[input];
  file.input_names = names;
  return "";
}

void write_hyperparameter_file(const std::string& path, const GaussianProcessPrior& prior,
                               const Standardisation& standardisation, const HyperparameterProvenance& provenance,
                               bool overwrite) {
  const KernelHyperparameters& hyperparameters = prior.kernel;
  nlohmann::ordered_json json;  // fields in the order written, for readers of the file
  json["format"] = "gpstream-hyperparameters";
  json["version"] = 1;
  json["kernel_name"] = kernel_name(hyperparameters);
  json["signal_variance"] = hyperparameters.signal_variance;
  json["length_scales"] = hyperparameters.lengthscales;
  std::vector<double> gamma;
  for (const double lengthscale : hyperparameters.lengthscales) gamma.push_back(gamma_from_lengthscale(lengthscale));
  json["gamma"] = gamma;
  json["noise_variance"] = hyperparameters.noise_variance;
  write_family_parameters(hyperparameters, json);
  if (hyperparameters.term_count() > 1) {
    nlohmann::ordered_json terms = nlohmann::ordered_json::array();
    for (std::size_t t = 1; t < hyperparameters.term_count(); ++t) {
      const KernelTerm& term = hyperparameters.term(t);
      nlohmann::ordered_json written = {{"kernel_name", kernel_type_name(term.type)},
                                        {"length_scales", term.lengthscales},
                                        {"signal_variance", term.signal_variance}};
      write_family_parameters(term, written);
      terms.push_back(std::move(written));
    }
    json["added_terms"] = terms;
  }
  json["log_marginal_likelihood"] = -provenance.negative_log_marginal_likelihood;
  json["objective"] = {{"likelihood", provenance.objective}, {"rows", provenance.rows}};
  if (provenance.candidates.size() > 1) {
    nlohmann::ordered_json compared = nlohmann::ordered_json::array();
    for (const auto& [name, value] : provenance.candidates) {
      compared.push_back({{"kernel", name}, {"negative_log_marginal_likelihood", value}});
    }
    json["kernels_compared"] = compared;
  }
  json["hyper_subset"] = {{"size", provenance.subset_size}, {"seed", provenance.seed}};
  json["optimizer"] = {{"tool", "NLopt L-BFGS (NLOPT_LD_LBFGS)"},
                       {"restarts", provenance.restarts},
                       {"tolerance", provenance.tolerance},
                       {"evaluations", provenance.evaluations},
                       {"wall_time_s", provenance.seconds}};
  json["dataset"] = {{"path", provenance.dataset_path}, {"fingerprint", provenance.dataset_fingerprint}};
  json["data_space"] = "standardised inputs and target (the standardisation below)";
  if (!provenance.input_names.empty()) json["input_names"] = provenance.input_names;
  // A constant input (spread 0) is standardised by 1 (Standardisation::apply_to_rows): written so.
  std::vector<double> x_std = standardisation.x_std;
  for (double& spread : x_std) spread = spread > 0 ? spread : 1.0;
  json["standardisation"] = {{"x_mean", standardisation.x_mean},
                             {"x_std", x_std},
                             {"y_mean", standardisation.y_mean},
                             {"y_std", standardisation.y_std}};
  if (!prior.mean.empty()) {
    const MeanFunction& mean = prior.mean;
    json["mean"] = {{"intercept", mean.intercept},
                    {"inputs", mean.inputs},
                    {"coefficients", mean.coefficients},
                    {"units", "standardised target on standardised inputs; inputs 0-based"}};
  }

  AtomicOutputFile output(path, overwrite);
  {
    std::ofstream stream(output.temporary_path());
    stream << json.dump(1) << "\n";
    stream.close();
    GPSTREAM_CHECK(stream.good(), "cannot write hyperparameter file '{}'", path);
  }
  output.commit();
}

}  // namespace gpstream
