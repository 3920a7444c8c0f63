// A model header that reaches into the transport and the widgets: tst_layering_catches must fail on it.
#include "client/telemetryclient.h"
#include <QWidget>
