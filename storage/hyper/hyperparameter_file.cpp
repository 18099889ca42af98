#include "storage/hyper/hyperparameter_file.h"

#include "engine/core/error.h"
#include "storage/output/atomic_output_file.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

namespace gpstream {
namespace {

using Json = nlohmann::json;

double number(const Json& object, const char* key, const std::string& path) {
  GPSTREAM_CHECK(object.contains(key), "{}: field \"{}\" is missing", path, key);
  GPSTREAM_CHECK(object.at(key).is_number(), "{}: field \"{}\" is not a number", path, key);
  return object.at(key).get<double>();
}

std::vector<double> numbers(const Json& object, const char* key, const std::string& path) {
  GPSTREAM_CHECK(object.contains(key), "{}: field \"{}\" is missing", path, key);
  const Json& value = object.at(key);
  if (value.is_number()) return {value.get<double>()};
  GPSTREAM_CHECK(value.is_array(), "{}: field \"{}\" is not a list of numbers", path, key);
  std::vector<double> result;
  for (const Json& item : value) {
    GPSTREAM_CHECK(item.is_number(), "{}: field \"{}\" holds something that is not a number", path, key);
    result.push_back(item.get<double>());
  }
  return result;
}

HyperparameterFile read_hyperparameters(const Json& json, const std::string& path);

}  // namespace

HyperparameterFile read_hyperparameter_file(const std::string& path) {
  std::error_code ignored;
  GPSTREAM_CHECK(!std::filesystem::is_directory(path, ignored), "'{}' is a directory, not a hyperparameter file", path);
  std::ifstream stream(path);
  GPSTREAM_CHECK(stream.good(), "cannot read hyperparameter file '{}'", path);
  try {
    return read_hyperparameters(Json::parse(stream), path);
  } catch (const Json::exception& error) {
    // A number beyond a double's range (1e400), a string where a number belongs, ...
    GPSTREAM_THROW("{}: not a valid hyperparameter file ({})", path, error.what());
  } catch (const std::ios_base::failure& error) {
    GPSTREAM_THROW("cannot read hyperparameter file '{}': {}", path, error.what());
  }
}

namespace {

HyperparameterFile read_hyperparameters(const Json& json, const std::string& path) {
  GPSTREAM_CHECK(json.is_object(), "{}: expected a JSON object", path);

  HyperparameterFile file;
  KernelHyperparameters& hyper = file.prior.kernel;
  if (json.contains("kernel_name")) hyper = parse_kernel_shape(json.at("kernel_name").get<std::string>());
  hyper.signal_variance = number(json, "signal_variance", path);
  hyper.noise_variance = number(json, "noise_variance", path);
  if (default_lengthscale_count(hyper.type, 1) == 0) {
    GPSTREAM_CHECK(!json.contains("length_scales") || json.at("length_scales").empty(),
                   "{}: the {} kernel has no lengthscales", path, kernel_type_name(hyper.type));
  } else if (json.contains("length_scales")) {
    hyper.lengthscales = numbers(json, "length_scales", path);
  } else {
    GPSTREAM_CHECK(json.contains("gamma"), "{}: needs \"length_scales\" or \"gamma\"", path);
    for (const double gamma : numbers(json, "gamma", path)) {
      GPSTREAM_CHECK(gamma > 0.0, "{}: gamma values must be positive, not {}", path, gamma);
      hyper.lengthscales.push_back(lengthscale_from_gamma(gamma));
    }
  }
  if (!hyper.added.empty()) {  // a sum's further terms: [{"kernel_name", "length_scales", "signal_variance"}, …]
    const Json& terms = json.at("added_terms");
    GPSTREAM_CHECK(terms.is_array() && terms.size() == hyper.added.size(),
                   "{}: the kernel {} needs \"added_terms\" with {} entries", path, kernel_name(hyper),
                   hyper.added.size());
    for (std::size_t t = 0; t < terms.size(); ++t) {
      hyper.added[t].lengthscales = numbers(terms[t], "length_scales", path + " added_terms");
      hyper.added[t].signal_variance = number(terms[t], "signal_variance", path + " added_terms");
    }
  }
  if (json.contains("standardisation")) {
    const Json& s = json.at("standardisation");
    Standardisation standardisation;
    standardisation.x_mean = numbers(s, "x_mean", path + " standardisation");
    standardisation.x_std = numbers(s, "x_std", path + " standardisation");
    standardisation.y_mean = number(s, "y_mean", path + " standardisation");
    standardisation.y_std = number(s, "y_std", path + " standardisation");
    GPSTREAM_CHECK(standardisation.x_mean.size() == standardisation.x_std.size(),
                   "{}: standardisation has {} means but {} standard deviations", path, standardisation.x_mean.size(),
                   standardisation.x_std.size());
    standardisation.validate(path + " standardisation");
    if (json.contains("mean")) {  // the prior mean of the standardised target, with its fitted coefficients
      const Json& m = json.at("mean");
      MeanFunction& mean = file.prior.mean;
      mean.intercept = m.at("intercept").get<bool>();
      for (const Json& column : m.at("inputs")) mean.inputs.push_back(column.get<std::size_t>());
      mean.coefficients = numbers(m, "coefficients", path + " mean");
      mean.validate(standardisation.x_mean.size(), path + " mean");
    }
    file.standardisation = std::move(standardisation);
  }
  return file;
}

}  // namespace

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
  if (!hyperparameters.added.empty()) {
    nlohmann::ordered_json terms = nlohmann::ordered_json::array();
    for (const KernelTerm& term : hyperparameters.added) {
      terms.push_back({{"kernel_name", kernel_type_name(term.type)},
                       {"length_scales", term.lengthscales},
                       {"signal_variance", term.signal_variance}});
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
  json["standardisation"] = {{"x_mean", standardisation.x_mean},
                             {"x_std", standardisation.x_std},
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
