// A widget that sees a protobuf type.
#include "fleetscope/telemetry/v1/telemetry.pb.h"
