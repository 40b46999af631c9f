// The fork server: a small process (cleansweep-forkserver) that a worker starts once, exec'd fresh
// rather than forked from the MPI process. It loads the trial code, a shared-library plugin (see
// CLEANSWEEP_TRIAL_PLUGIN in <cleansweep/trial.hpp>), refuses one that initialised CUDA while
// loading, and for each request clones one child with CLONE_PARENT: the child is the worker's
// own, exactly as a spawned trial would be, and runs the plugin's entry point with the trial's
// argv, environment and pipes. The
// costly part of starting a trial (loading libtorch, say) is paid once; each trial still starts
// from the state the plugin had after loading, and creates its own CUDA context.
#pragma once

#include <string>

namespace cleansweep {

// Exit status of the server when the plugin cannot be loaded or prepared.
inline constexpr int kForkServerBadPlugin = 2;

// The memory of the server's command line (argv[0] to the end of the last argument): a forked
// trial writes its own title there, so that ps and pkill -f tell trials from their server.
struct CommandLineArea {
  char* start = nullptr;
  size_t size = 0;
};

// Serves requests on `socket` (fork_server_protocol.hpp) until the worker closes it; returns the
// exit status. Messages go to stderr, which is the worker's.
int RunForkServer(int socket, const std::string& plugin, CommandLineArea command_line = {});

}  // namespace cleansweep
