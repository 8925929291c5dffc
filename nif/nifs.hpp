// NIF entry points, grouped by concern; registered in nx_vulkan_nif.cpp.
#pragma once
#include <erl_nif.h>

namespace nxv_nif {

#define NXV_NIF(name) ERL_NIF_TERM name(ErlNifEnv* env, int argc, const ERL_NIF_TERM argv[])

// tensor_nifs.cpp
NXV_NIF(from_binary_nif);
NXV_NIF(to_binary_nif);
NXV_NIF(deallocate_nif);
NXV_NIF(deallocated_nif);
NXV_NIF(copy_nif);
NXV_NIF(op_nif);
NXV_NIF(op_table_nif);
NXV_NIF(check_op_nif);
bool open_prepared_resource_type(ErlNifEnv* env);

// program_nifs.cpp
NXV_NIF(program_compile_nif);
NXV_NIF(program_compile_loop_nif);
NXV_NIF(program_run_nif);
NXV_NIF(program_gateable_nif);
bool open_program_resource_type(ErlNifEnv* env);

// device_nifs.cpp
NXV_NIF(devices_nif);
NXV_NIF(default_device_nif);
NXV_NIF(device_info_nif);
NXV_NIF(memory_statistics_nif);
NXV_NIF(reset_peak_memory_nif);
NXV_NIF(set_memory_limit_nif);
NXV_NIF(clear_buffer_cache_nif);
NXV_NIF(kernel_cache_stats_nif);
NXV_NIF(stream_stats_nif);
NXV_NIF(kernel_profile_nif);
NXV_NIF(save_pipeline_cache_nif);
NXV_NIF(fail_submission_nif);
NXV_NIF(reopen_device_nif);
NXV_NIF(synchronize_nif);
NXV_NIF(validation_nif);
NXV_NIF(clear_validation_nif);

#undef NXV_NIF

}  // namespace nxv_nif
