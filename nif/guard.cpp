#include "guard.hpp"

#include <new>
#include <string>

#include "nxv/error.hpp"
#include "terms.hpp"

namespace nxv_nif {

ERL_NIF_TERM make_error(ErlNifEnv* env, const char* kind, std::string_view message) {
  return enif_make_tuple3(env, atoms.error, make_atom(env, kind), make_binary(env, message));
}

ERL_NIF_TERM current_exception_to_term(ErlNifEnv* env) noexcept {
  try {
    try {
      throw;
    } catch (const nxv::Error& e) {
      return make_error(env, nxv::error_kind_name(e.kind()), e.what());
    } catch (const std::bad_alloc& e) {
      return make_error(env, "out_of_memory", std::string("host allocation failed: ") + e.what());
    } catch (const std::exception& e) {
      return make_error(env, "driver", e.what());
    } catch (...) {
      return make_error(env, "driver", "unknown C++ exception");
    }
  } catch (...) {
    // Building the error term itself failed (out of memory while allocating the message).
    return enif_make_tuple3(env, atoms.error, atoms.out_of_memory, atoms.nil);
  }
}

}  // namespace nxv_nif
