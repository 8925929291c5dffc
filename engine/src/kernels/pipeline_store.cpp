#include "kernels/pipeline_store.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "kernels/disk_cache.hpp"

namespace nxv {

namespace {

std::string file_name(const DeviceCore& core) {
  std::string uuid;
  char buf[3];
  for (uint8_t b : core.pipeline_cache_uuid()) {
    std::snprintf(buf, sizeof buf, "%02x", b);
    uuid += buf;
  }
  return "pipelines-" + hex64((uint64_t(core.info().vendor_id) << 32) | core.info().device_id) + "-" + uuid +
         ".bin";
}

// VkPipelineCacheHeaderVersionOne: a cache written for another device or driver is ignored.
bool matches(const std::vector<char>& data, const DeviceCore& core) {
  if (data.size() < 32) return false;
  uint32_t header[4];
  std::memcpy(header, data.data(), sizeof header);
  if (header[0] < 32 || header[1] != VK_PIPELINE_CACHE_HEADER_VERSION_ONE) return false;
  if (header[2] != core.info().vendor_id || header[3] != core.info().device_id) return false;
  auto uuid = core.pipeline_cache_uuid();
  return std::memcmp(data.data() + 16, uuid.data(), VK_UUID_SIZE) == 0;
}

std::optional<std::filesystem::path> store_path(const DeviceCore& core) {
  auto dir = cache_directory();
  if (!dir) return std::nullopt;
  return *dir / file_name(core);
}

}  // namespace

PipelineStore::PipelineStore(std::shared_ptr<DeviceCore> core) : core_(std::move(core)) {
  path_ = store_path(*core_);
  std::vector<char> initial;
  if (path_)
    if (auto data = read_file(*path_); data && matches(*data, *core_)) initial = std::move(*data);
  translate_vk("creating the pipeline cache", [&] {
    cache_.emplace(core_->device(), vk::PipelineCacheCreateInfo{.initialDataSize = initial.size(),
                                                                .pInitialData = initial.data()});
  });
  loaded_bytes_ = initial.size();
  if (path_) saver_ = std::jthread([this](std::stop_token stop) { saver_loop(stop); });
}

PipelineStore::~PipelineStore() {
  if (saver_.joinable()) {
    saver_.request_stop();
    saver_.join();
  }
  try {
    save();
  } catch (...) {
    // Persisting is an optimisation; a failure here must not escape a destructor.
  }
}

vk::raii::Pipeline PipelineStore::create(const vk::ComputePipelineCreateInfo& requested) {
  vk::PipelineCreationFeedback pipeline_feedback{}, stage_feedback{};
  vk::PipelineCreationFeedbackCreateInfo feedback{.pNext = requested.pNext,
                                                  .pPipelineCreationFeedback = &pipeline_feedback,
                                                  .pipelineStageCreationFeedbackCount = 1,
                                                  .pPipelineStageCreationFeedbacks = &stage_feedback};
  vk::ComputePipelineCreateInfo info = requested;
  info.pNext = &feedback;
  std::optional<vk::raii::Pipeline> created;
  {
    SubmitExclusion::Creation creating(core_->submit_exclusion());
    created.emplace(core_->device(), *cache_, info);
  }
  vk::raii::Pipeline pipeline = std::move(*created);
  using F = vk::PipelineCreationFeedbackFlagBits;
  if ((pipeline_feedback.flags & F::eValid) && (pipeline_feedback.flags & F::eApplicationPipelineCacheHit))
    ++cache_hits_;
  ++created_;
  if (path_) {
    {
      std::lock_guard lock(wake_mutex_);
      last_created_ = std::chrono::steady_clock::now();
    }
    wake_.notify_one();
  }
  return pipeline;
}

void PipelineStore::saver_loop(std::stop_token stop) {
  const auto quiet = core_->profile().pipeline_save_quiet;
  std::unique_lock lock(wake_mutex_);
  uint64_t seen = 0;
  while (true) {
    if (!wake_.wait(lock, stop, [&] { return created_.load() != seen; })) return;
    // Waits out the batch: until no pipeline was created for `quiet`.
    while (!stop.stop_requested() && std::chrono::steady_clock::now() < last_created_ + quiet)
      wake_.wait_until(lock, stop, last_created_ + quiet, [] { return false; });
    if (stop.stop_requested()) return;  // the destructor saves
    seen = created_.load();
    lock.unlock();
    try {
      save();
    } catch (...) {
      // Best effort: the next batch or the destructor tries again.
    }
    lock.lock();
  }
}

void PipelineStore::save() {
  std::lock_guard lock(save_mutex_);
  uint64_t created = created_.load();
  if (created == saved_created_) return;
  if (!path_) return;
  translate_vk("saving the pipeline cache", [&] {
    std::vector<uint8_t> data;
    // Merges into a copy of what is on disk (another process may have added to it); merging
    // into the live cache would need every pipeline creation to stop meanwhile.
    if (auto disk = read_file(*path_); disk && matches(*disk, *core_)) {
      vk::raii::PipelineCache merged(core_->device(), vk::PipelineCacheCreateInfo{
                                                          .initialDataSize = disk->size(), .pInitialData = disk->data()});
      merged.merge(vk::PipelineCache(**cache_));
      data = merged.getData();
    } else {
      data = cache_->getData();
    }
    write_file_atomically(*path_, std::string_view(reinterpret_cast<const char*>(data.data()), data.size()));
  });
  saved_created_ = created;
  ++saves_;
}

PipelineStoreStats PipelineStore::stats() const { return {loaded_bytes_.load(), cache_hits_.load(), saves_.load()}; }

}  // namespace nxv
