// The public API's boundary (Network's entry points, lib/src/network.cpp): what escapes it is an
// irrun::Error, as README.md's "Using the library" promises. Internal, not installed.
#pragma once

#include <string>

namespace irrun {

// Call from a catch (...) handler at the boundary: rethrows the exception being handled, a
// std::bad_alloc (a vector of a kernel's tables, with no memory limit set to refuse it first) as
// Error(limit) "<path>: out of memory <action> (N in irrun's buffers)", as Buffer::allocate
// reports an allocation that fails; a std::system_error (threads the system will not start) as
// Error(limit) too; any other exception as it is.
[[noreturn]] void rethrow_at_api_boundary(const std::string& path, const char* action);

}  // namespace irrun
