# SPDX-License-Identifier: Apache-2.0
# Which folder may include which (docs/ARCHITECTURE.md): run as `cmake -DROOT=<tree> -P layering.cmake`; fails,
# naming file and line, on the first include that crosses an arrow the wrong way. CMake's link graph already keeps
# symbols apart; this keeps headers apart too (every target sees the whole tree as its include root).
if(NOT ROOT)
    message(FATAL_ERROR "layering.cmake: pass -DROOT=<source tree>")
endif()

# folder glob -> regular expression of includes it must not have
set(rules
    "common|(\"(jobs|model|client|widgets|app|backend|proto)/|<Q|fleetscope/telemetry|grpc)"
    "jobs|(\"(model|client|widgets|app|backend|proto)/|<Qt(Gui|Widgets|OpenGL|Charts|Network)/|<QWidget|fleetscope/telemetry|grpc)"
    "model|(\"(client|widgets|app|backend)/|<Qt(Gui|Widgets|OpenGL|Charts|Network)/|<QOpenGL|<QWidget|<QColor|<QImage|<QPainter|fleetscope/telemetry|grpc|google/protobuf)"
    "client|(\"(widgets|app|backend)/|<Qt(Gui|Widgets)/|<QWidget)"
    "widgets|(\"(app|backend|client)/|fleetscope/telemetry|grpc|google/protobuf)"
    "backend|(\"(jobs|model|client|widgets|app)/|<QtWidgets|<QWidget)"
    # The backend's parts (backend/CMakeLists.txt): core under everything, and knowing none of them: a FrameSource's
    # judge is an interface of core's (FrameJudge) that analytics implements; analytics (the anomaly detector, the
    # repeat-offender score) and formats (the topology file, JSON text) over core alone; http (the endpoints'
    # connections) over core alone and under the two producers that serve HTTP; dcgm (dcgm-exporter's vocabulary) over
    # core and formats and under the two producers that read dcgm-exporter's series; the producers and the service
    # beside one another, the simulator's source judged by analytics as main judges the others (remote write's history
    # from a Prometheus-compatible server is a core UpstreamHistory that main hands it).
    "backend/core|\"(analytics|formats|http|sim|dcgm|prometheus|remotewrite|alerting|service)/"
    "backend/analytics|\"(formats|http|sim|dcgm|prometheus|remotewrite|alerting|service)/"
    "backend/formats|\"(analytics|http|sim|dcgm|prometheus|remotewrite|alerting|service)/"
    "backend/http|\"(analytics|formats|sim|dcgm|prometheus|remotewrite|alerting|service)/"
    "backend/dcgm|\"(analytics|http|sim|prometheus|remotewrite|alerting|service)/"
    "backend/sim|\"(dcgm|prometheus|remotewrite|alerting|service)/"
    "backend/prometheus|\"(analytics|http|sim|remotewrite|alerting|service)/"
    "backend/remotewrite|\"(analytics|sim|prometheus|alerting|service)/"
    "backend/alerting|\"(analytics|http|sim|dcgm|remotewrite|service)/"
    "backend/service|\"(analytics|formats|http|sim|dcgm|prometheus|remotewrite|alerting)/")

set(violations "")
foreach(rule IN LISTS rules)
    string(FIND "${rule}" "|" bar)
    string(SUBSTRING "${rule}" 0 ${bar} folder)
    math(EXPR start "${bar} + 1")
    string(SUBSTRING "${rule}" ${start} -1 forbidden)
    file(GLOB_RECURSE sources "${ROOT}/${folder}/*.h" "${ROOT}/${folder}/*.cpp")
    foreach(source IN LISTS sources)
        file(STRINGS "${source}" includes REGEX "^[ \t]*#[ \t]*include")
        foreach(line IN LISTS includes)
            if(line MATCHES "${forbidden}")
                file(RELATIVE_PATH relative "${ROOT}" "${source}")
                string(APPEND violations "  ${relative}: ${line}\n")
            endif()
        endforeach()
    endforeach()
endforeach()
if(violations)
    message(FATAL_ERROR "Includes that cross the architecture's arrows the wrong way:\n${violations}")
endif()
message(STATUS "layering: every include follows the arrows")
