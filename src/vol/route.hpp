// The two routes a file can take through the connector (vol.hpp): the
// choice, and the callback tables that send each call down its object's route.
#pragma once

#include <optional>
#include <string>

#include "vol/vol.hpp"

namespace h5loom::vol {

// Whether a file with connector configuration `configured` takes the native
// route: the configuration (else $H5LOOM_ENGINE) is the plain hdf5 engine,
// without knobs or wrappers, and no profile is being recorded; with neither,
// the engine that wrote `opening` (nullptr: a new file, the default engine).
// `written_by`, if given, receives that engine when it was probed for.
bool takes_native_route(const std::string& configured, const char* opening,
                        std::optional<std::string>* written_by = nullptr);

// The tables the connector's class holds (route.cpp).
namespace routed {
extern const H5VL_wrap_class_t kWrap;
extern const H5VL_attr_class_t kAttr;
extern const H5VL_dataset_class_t kDataset;
extern const H5VL_datatype_class_t kDatatype;
extern const H5VL_file_class_t kFile;
extern const H5VL_group_class_t kGroup;
extern const H5VL_link_class_t kLink;
extern const H5VL_object_class_t kObject;
extern const H5VL_blob_class_t kBlob;
extern const H5VL_token_class_t kToken;
}  // namespace routed

}  // namespace h5loom::vol
