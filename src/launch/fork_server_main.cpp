// cleansweep-forkserver: started by a worker with trial.launcher: forkserver, never by hand.
//   cleansweep-forkserver --socket FD PLUGIN
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "launch/fork_server.hpp"

int main(int argc, char** argv) {
  if (argc != 4 || std::strcmp(argv[1], "--socket") != 0) {
    std::fprintf(stderr,
                 "usage: cleansweep-forkserver --socket FD PLUGIN\n"
                 "A worker of `cleansweep run` starts this with trial.launcher: forkserver; it is not run by hand.\n");
    return 2;
  }
  cleansweep::CommandLineArea area{argv[0],
                                   static_cast<size_t>(argv[argc - 1] + std::strlen(argv[argc - 1]) - argv[0])};
  return cleansweep::RunForkServer(std::atoi(argv[2]), argv[3], area);
}
