// The trainer, as main() would be; see train.cpp.
#pragma once

int TrainMain(int argc, char** argv);
