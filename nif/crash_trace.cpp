#include "crash_trace.hpp"

#include <execinfo.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include "nxv/diagnostics.hpp"

namespace nxv_nif {
namespace {

void write_str(const char* s) { (void)!write(STDERR_FILENO, s, std::strlen(s)); }

void on_fatal_signal(int sig, siginfo_t* info, void*) {
  char name[17] = {};
  prctl(PR_GET_NAME, name, 0, 0, 0);
  write_str("\n[nx_vulkan crash trace] signal ");
  write_str(strsignal(sig));
  write_str(" in thread '");
  write_str(name);
  write_str("'\n");
  (void)info;
  void* frames[64];
  int n = backtrace(frames, 64);
  backtrace_symbols_fd(frames, n, STDERR_FILENO);
  signal(sig, SIG_DFL);
  raise(sig);
}

}  // namespace

void install_crash_trace_if_asked() {
  if (!nxv::crash_trace_requested()) return;
  void* warm[1];
  backtrace(warm, 1);  // loads libgcc now, not inside the handler
  struct sigaction action {};
  action.sa_sigaction = on_fatal_signal;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE}) sigaction(sig, &action, nullptr);
}

}  // namespace nxv_nif
