#include "exec/kernel_profile.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "common/settings.hpp"
#include "device/device_core.hpp"

namespace nxv {

KernelProfiler::KernelProfiler(DeviceCore& core) : core_(core) {
  if (!settings()->profile) return;
  auto limits = core.physical().getProperties().limits;
  auto families = core.physical().getQueueFamilyProperties();
  uint32_t bits = core.queue_family() < families.size() ? families[core.queue_family()].timestampValidBits : 0;
  if (bits == 0 || limits.timestampPeriod <= 0) return;  // the queue has no timestamps
  enabled_ = true;
  period_ns_ = limits.timestampPeriod;
  valid_mask_ = bits >= 64 ? ~0ull : (1ull << bits) - 1;
}

void KernelProfiler::begin(Batch& batch, const vk::raii::CommandBuffer& cmd) const {
  if (!enabled_) return;
  if (!batch.pool)
    batch.pool.emplace(core_.device(), vk::QueryPoolCreateInfo{.queryType = vk::QueryType::eTimestamp, .queryCount = kQueries});
  batch.labels.clear();
  cmd.resetQueryPool(**batch.pool, 0, kQueries);
  cmd.writeTimestamp2(vk::PipelineStageFlagBits2::eAllCommands, **batch.pool, 0);
}

void KernelProfiler::after_dispatch(Batch& batch, const vk::raii::CommandBuffer& cmd, std::string_view label) const {
  if (!enabled_ || !batch.pool || batch.labels.size() + 1 >= kQueries) return;
  batch.labels.emplace_back(label);
  cmd.writeTimestamp2(vk::PipelineStageFlagBits2::eAllCommands, **batch.pool, uint32_t(batch.labels.size()));
}

void KernelProfiler::collect(Batch& batch) {
  if (!enabled_ || !batch.pool || batch.labels.empty()) return;
  std::vector<uint64_t> stamps(batch.labels.size() + 1);
  auto result = core_.device().getDispatcher()->vkGetQueryPoolResults(
      static_cast<VkDevice>(*core_.device()), static_cast<VkQueryPool>(**batch.pool), 0, uint32_t(stamps.size()),
      stamps.size() * sizeof(uint64_t), stamps.data(), sizeof(uint64_t), VK_QUERY_RESULT_64_BIT);
  if (result == VK_SUCCESS) {
    std::lock_guard lock(mutex_);
    for (size_t i = 0; i < batch.labels.size(); ++i) {
      uint64_t ticks = ((stamps[i + 1] & valid_mask_) - (stamps[i] & valid_mask_)) & valid_mask_;
      KernelTime& t = totals_[batch.labels[i]];
      t.kernel = batch.labels[i];
      t.count += 1;
      t.total_ns += double(ticks) * period_ns_;
    }
  }
  batch.labels.clear();
}

std::vector<KernelTime> KernelProfiler::take() {
  std::lock_guard lock(mutex_);
  std::vector<KernelTime> out;
  out.reserve(totals_.size());
  for (auto& [label, t] : totals_) out.push_back(std::move(t));
  totals_.clear();
  std::sort(out.begin(), out.end(), [](const KernelTime& a, const KernelTime& b) { return a.total_ns > b.total_ns; });
  return out;
}

}  // namespace nxv
