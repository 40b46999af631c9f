/* A stand-in for libnvidia-ml.so.1, for tests on machines without a GPU. On every call it reads
 * the file that FAKE_NVML_STATE names, then every file in the folder FAKE_NVML_STATE.d (where test
 * trials put their own lines):
 *   device INDEX UUID TOTAL_MB BASE_MB      a GPU; its used memory is BASE_MB + its processes'
 *   process INDEX PID MB                    a compute process holding MB on device INDEX
 *   energy INDEX MJ                         MJ millijoules on device INDEX's energy counter, which is
 *                                           the sum of these lines; a device counts energy only if
 *                                           FAKE_NVML_STATE itself has one for it (else: not supported)
 * Handles are 1 + the device index. Only the entry points cleansweep uses are here. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  unsigned long long total, free, used;
} Memory;
typedef struct {
  unsigned int pid;
  unsigned long long used;
  unsigned int gi, ci;
} Process;

enum { kMax = 256 };
static struct {
  int index;
  char uuid[96];
  double total, base;
} devices[kMax];
static struct {
  int index;
  unsigned int pid;
  double mb;
} processes[kMax];
static struct {
  int index;
  unsigned long long mj;
  int base; /* from FAKE_NVML_STATE itself, not from its .d folder */
} energies[kMax];
static int loading_base;
static int n_devices, n_processes, n_energies;

static void LoadFile(const char* path) {
  FILE* f = fopen(path, "r");
  if (!f) return;
  char kind[16];
  while (fscanf(f, "%15s", kind) == 1) {
    if (strcmp(kind, "device") == 0 && n_devices < kMax) {
      if (fscanf(f, "%d %95s %lf %lf", &devices[n_devices].index, devices[n_devices].uuid, &devices[n_devices].total,
                 &devices[n_devices].base) == 4) {
        ++n_devices;
      }
    } else if (strcmp(kind, "process") == 0 && n_processes < kMax) {
      if (fscanf(f, "%d %u %lf", &processes[n_processes].index, &processes[n_processes].pid,
                 &processes[n_processes].mb) == 3) {
        ++n_processes;
      }
    } else if (strcmp(kind, "energy") == 0 && n_energies < kMax) {
      if (fscanf(f, "%d %llu", &energies[n_energies].index, &energies[n_energies].mj) == 2) {
        energies[n_energies++].base = loading_base;
      }
    } else {
      int c;
      while ((c = fgetc(f)) != EOF && c != '\n') {
      }
    }
  }
  fclose(f);
}

static void Load(void) {
  n_devices = n_processes = n_energies = 0;
  const char* path = getenv("FAKE_NVML_STATE");
  if (!path) return;
  loading_base = 1;
  LoadFile(path);
  loading_base = 0;
  char folder[4096];
  snprintf(folder, sizeof folder, "%s.d", path);
  DIR* dir = opendir(folder);
  if (!dir) return;
  for (struct dirent* entry; (entry = readdir(dir)) != NULL;) {
    if (entry->d_name[0] == '.') continue;
    char file[8192];
    snprintf(file, sizeof file, "%s/%s", folder, entry->d_name);
    LoadFile(file);
  }
  closedir(dir);
}

static int Find(int index) {
  for (int i = 0; i < n_devices; ++i) {
    if (devices[i].index == index) return i;
  }
  return -1;
}

int nvmlInit_v2(void) { return getenv("FAKE_NVML_FAIL_INIT") ? 999 : 0; }
int nvmlShutdown(void) { return 0; }

int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void** device) {
  Load();
  if (Find((int)index) < 0) return 2; /* NVML_ERROR_INVALID_ARGUMENT */
  *device = (void*)(size_t)(index + 1);
  return 0;
}

int nvmlDeviceGetHandleByUUID(const char* uuid, void** device) {
  Load();
  for (int i = 0; i < n_devices; ++i) {
    if (strcmp(devices[i].uuid, uuid) == 0) {
      *device = (void*)(size_t)(devices[i].index + 1);
      return 0;
    }
  }
  return 6; /* NVML_ERROR_NOT_FOUND */
}

int nvmlDeviceGetMemoryInfo(void* device, Memory* memory) {
  Load();
  const int index = (int)(size_t)device - 1, d = Find(index);
  if (d < 0) return 2;
  double used = devices[d].base;
  for (int i = 0; i < n_processes; ++i) {
    if (processes[i].index == index) used += processes[i].mb;
  }
  memory->total = (unsigned long long)(devices[d].total * 1048576.0);
  memory->used = (unsigned long long)(used * 1048576.0);
  memory->free = memory->total > memory->used ? memory->total - memory->used : 0;
  return 0;
}

int nvmlDeviceGetComputeRunningProcesses_v3(void* device, unsigned int* count, Process* infos) {
  Load();
  const int index = (int)(size_t)device - 1;
  unsigned int n = 0;
  for (int i = 0; i < n_processes; ++i) n += processes[i].index == index;
  if (n > *count) {
    *count = n;
    return 7; /* NVML_ERROR_INSUFFICIENT_SIZE */
  }
  n = 0;
  for (int i = 0; i < n_processes; ++i) {
    if (processes[i].index != index) continue;
    infos[n].pid = processes[i].pid;
    infos[n].used = (unsigned long long)(processes[i].mb * 1048576.0);
    infos[n].gi = infos[n].ci = 0;
    ++n;
  }
  *count = n;
  return 0;
}

int nvmlDeviceGetTotalEnergyConsumption(void* device, unsigned long long* millijoules) {
  Load();
  const int index = (int)(size_t)device - 1;
  int counted = 0;
  *millijoules = 0;
  for (int i = 0; i < n_energies; ++i) {
    if (energies[i].index != index) continue;
    *millijoules += energies[i].mj;
    counted |= energies[i].base;
  }
  return counted ? 0 : 3; /* NVML_ERROR_NOT_SUPPORTED */
}
