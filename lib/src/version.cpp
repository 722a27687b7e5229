#include "irrun/version.hpp"

namespace irrun {

const char* version() {
  return IRRUN_VERSION_STRING;
}

}  // namespace irrun
