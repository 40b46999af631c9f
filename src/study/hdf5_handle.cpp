#include "study/hdf5_handle.hpp"

#include <vector>

#include "util/utf8.hpp"

namespace cleansweep::h5 {

void Handle::Reset() {
  if (id_ < 0) return;
  switch (H5Iget_type(id_)) {
    case H5I_FILE:
      H5Fclose(id_);
      break;
    case H5I_GROUP:
      H5Gclose(id_);
      break;
    case H5I_DATASET:
      H5Dclose(id_);
      break;
    case H5I_DATATYPE:
      H5Tclose(id_);
      break;
    case H5I_DATASPACE:
      H5Sclose(id_);
      break;
    case H5I_ATTR:
      H5Aclose(id_);
      break;
    case H5I_GENPROP_LST:
      H5Pclose(id_);
      break;
    default:
      H5Idec_ref(id_);
      break;
  }
  id_ = H5I_INVALID_HID;
}

void DontCloseAtExit() { H5dont_atexit(); }

void QuietErrors() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

std::string ErrorStackText() {
  std::vector<std::string> messages;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_DOWNWARD,
      [](unsigned, const H5E_error2_t* e, void* data) -> herr_t {
        auto* out = static_cast<std::vector<std::string>*>(data);
        if (e->desc && *e->desc) out->push_back(e->desc);
        return 0;
      },
      &messages);
  std::string text;
  // The first entries are the outermost API calls; the last ones say what really went wrong.
  const size_t from = messages.size() > 2 ? messages.size() - 2 : 0;
  for (size_t i = from; i < messages.size(); ++i) text += (text.empty() ? "" : ": ") + messages[i];
  H5Eclear2(H5E_DEFAULT);
  return text.empty() ? "unknown HDF5 error" : text;
}

Result<Handle> CheckId(hid_t id, const std::string& what) {
  if (id < 0) return Status::IoError(what + " (HDF5: " + ErrorStackText() + ")");
  return Handle(id);
}

Status CheckCall(herr_t rc, const std::string& what) {
  if (rc < 0) return Status::IoError(what + " (HDF5: " + ErrorStackText() + ")");
  return Status::Ok();
}

Handle FileAccess(bool latest_format) {
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS));
  Must(H5Pset_metadata_read_attempts(fapl.get(), kMetadataReadAttempts));
  if (latest_format) Must(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_LATEST, H5F_LIBVER_LATEST));
  return fapl;
}

Result<Handle> OpenForReading(const std::string& path) {
  const Handle fapl = FileAccess(false);
  Result<Handle> file = CheckId(H5Fopen(path.c_str(), H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, fapl.get()), "");
  if (file.ok()) return file;
  return CheckId(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()), path + ": cannot open the study file");
}

Result<hsize_t> RowCount(hid_t dataset, const std::string& what) {
  CS_ASSIGN_OR_RETURN(const Handle space, CheckId(H5Dget_space(dataset), what + ": cannot read the table's size"));
  hsize_t dims[1] = {0};
  if (H5Sget_simple_extent_ndims(space.get()) != 1 || H5Sget_simple_extent_dims(space.get(), dims, nullptr) != 1) {
    return Status::IoError(what + ": the table is not one-dimensional (HDF5: " + ErrorStackText() + ")");
  }
  return dims[0];
}

Handle FixedString(size_t length) {
  Handle type(H5Tcopy(H5T_C_S1));
  Must(H5Tset_size(type.get(), length));
  Must(H5Tset_strpad(type.get(), H5T_STR_NULLPAD));
  Must(H5Tset_cset(type.get(), H5T_CSET_UTF8));
  return type;
}

Handle VarString() {
  Handle type(H5Tcopy(H5T_C_S1));
  Must(H5Tset_size(type.get(), H5T_VARIABLE));
  Must(H5Tset_cset(type.get(), H5T_CSET_UTF8));
  return type;
}

Status WriteAttr(hid_t object, const char* name, const std::string& value) {
  Handle type = VarString();
  Handle space(H5Screate(H5S_SCALAR));
  Result<Handle> attr = CheckId(H5Acreate2(object, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
                                std::string("cannot create attribute ") + name);
  if (!attr.ok()) return attr.status();
  const char* data = value.c_str();
  return CheckCall(H5Awrite(attr->get(), type.get(), &data), std::string("cannot write attribute ") + name);
}

Status WriteAttr(hid_t object, const char* name, long long value) {
  Handle space(H5Screate(H5S_SCALAR));
  Result<Handle> attr = CheckId(H5Acreate2(object, name, H5T_NATIVE_LLONG, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                                std::string("cannot create attribute ") + name);
  if (!attr.ok()) return attr.status();
  return CheckCall(H5Awrite(attr->get(), H5T_NATIVE_LLONG, &value), std::string("cannot write attribute ") + name);
}

Status WriteFixedStringAttr(hid_t object, const char* name, const std::string& value, size_t size) {
  Handle type(H5Tcopy(H5T_C_S1));
  if (!type.valid() || H5Tset_size(type.get(), size) < 0 || H5Tset_cset(type.get(), H5T_CSET_UTF8) < 0) {
    return Status::IoError(std::string("cannot make the type of attribute ") + name);
  }
  std::string data = Utf8Prefix(value, size - 1);
  data.resize(size, '\0');
  const htri_t exists = H5Aexists(object, name);
  CS_RETURN_IF_ERROR(CheckCall(exists < 0 ? -1 : 0, std::string("cannot look for attribute ") + name));
  Handle space(H5Screate(H5S_SCALAR));
  Result<Handle> attr = exists > 0
                            ? CheckId(H5Aopen(object, name, H5P_DEFAULT), std::string("cannot open attribute ") + name)
                            : CheckId(H5Acreate2(object, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
                                      std::string("cannot create attribute ") + name);
  if (!attr.ok()) return attr.status();
  return CheckCall(H5Awrite(attr->get(), type.get(), data.data()), std::string("cannot write attribute ") + name);
}

Result<std::string> ReadStringAttr(hid_t object, const char* name) {
  Result<Handle> attr = CheckId(H5Aopen(object, name, H5P_DEFAULT), std::string("missing attribute ") + name);
  if (!attr.ok()) return attr.status();
  Handle file_type(H5Aget_type(attr->get()));
  if (H5Tget_class(file_type.get()) != H5T_STRING) {
    return Status::IoError(std::string("attribute ") + name + " is not a string");
  }
  if (H5Tis_variable_str(file_type.get()) > 0) {
    Handle type = VarString();
    char* data = nullptr;
    CS_RETURN_IF_ERROR(CheckCall(H5Aread(attr->get(), type.get(), &data), std::string("cannot read ") + name));
    std::string value = data ? data : "";
    H5free_memory(data);
    return value;
  }
  std::string value(H5Tget_size(file_type.get()), '\0');
  CS_RETURN_IF_ERROR(
      CheckCall(H5Aread(attr->get(), file_type.get(), value.data()), std::string("cannot read ") + name));
  return value.substr(0, value.find('\0'));
}

Status DeleteAttrIfPresent(hid_t object, const char* name) {
  const htri_t exists = H5Aexists(object, name);
  CS_RETURN_IF_ERROR(CheckCall(exists < 0 ? -1 : 0, std::string("cannot look for attribute ") + name));
  if (exists == 0) return Status::Ok();
  return CheckCall(H5Adelete(object, name), std::string("cannot remove attribute ") + name);
}

Result<long long> ReadIntAttr(hid_t object, const char* name) {
  Result<Handle> attr = CheckId(H5Aopen(object, name, H5P_DEFAULT), std::string("missing attribute ") + name);
  if (!attr.ok()) return attr.status();
  long long value = 0;
  CS_RETURN_IF_ERROR(CheckCall(H5Aread(attr->get(), H5T_NATIVE_LLONG, &value), std::string("cannot read ") + name));
  return value;
}

}  // namespace cleansweep::h5
