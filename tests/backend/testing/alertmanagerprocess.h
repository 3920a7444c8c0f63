// SPDX-License-Identifier: Apache-2.0
// What the tests that start a real Prometheus Alertmanager (Debian's prometheus-alertmanager, 0.25 in bookworm) or
// VictoriaMetrics' vmalert share: a configuration, starting each on loopback with a free port and temporary storage,
// and waiting until it answers.
#pragma once

#include "tests/backend/testing/prometheusprocess.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QStandardPaths>

namespace fleetscope::testing {

// The binary, or empty when the package is not installed (scripts/common.sh installs it).
inline QString alertmanagerBinary()
{
    const QString debian = QStandardPaths::findExecutable(QStringLiteral("prometheus-alertmanager"));
    return debian.isEmpty() ? QStandardPaths::findExecutable(QStringLiteral("alertmanager")) : debian;
}

// One route to a receiver that sends nowhere: the tests read Alertmanager's API, not its notifications. Grouping waits
// are short so that a group's state follows at once; resolve_timeout is Alertmanager's default.
inline QByteArray alertmanagerConfig()
{
    return "route:\n"
           "  receiver: noc\n"
           "  group_by: [alertname]\n"
           "  group_wait: 1s\n"
           "  group_interval: 1s\n"
           "  repeat_interval: 1h\n"
           "receivers:\n"
           "  - name: noc\n"
           "inhibit_rules:\n"
           "  - source_matchers: [alertname=\"NodeDown\"]\n"
           "    target_matchers: [alertname=\"GpuHot\"]\n"
           "    equal: [Hostname]\n";
}

// Alertmanager on 127.0.0.1:port with its storage under dataDir, gossip off (no cluster port). Started, not yet ready:
// waitForAlertmanager.
inline bool startAlertmanager(
    ProcessGuard *guard, const QString &config, const QString &dataDir, int port, const QStringList &extra = {})
{
    guard->process.setProcessChannelMode(QProcess::MergedChannels);
    guard->process.start(alertmanagerBinary(),
        QStringList { QStringLiteral("--config.file=") + config, QStringLiteral("--storage.path=") + dataDir,
            QStringLiteral("--web.listen-address=127.0.0.1:%1").arg(port), QStringLiteral("--cluster.listen-address="),
            QStringLiteral("--log.level=warn") }
            + extra);
    return guard->process.waitForStarted(10000);
}

// Empty once Alertmanager answers its API; else why not (for QVERIFY2).
inline QString waitForAlertmanager(ProcessGuard &guard, int port, int timeoutMs = 30000)
{
    return waitForServer(guard, QStringLiteral("Alertmanager"), timeoutMs, [port](QString *detail) {
        int status = 0;
        httpGet(port, "/api/v2/status", 2000, &status);
        *detail = QStringLiteral("GET /api/v2/status: %1").arg(status);
        return status == 200;
    });
}

// Alertmanager's alerts as its API lists them (active, silenced and inhibited).
inline QJsonArray alertmanagerAlerts(int port)
{
    return QJsonDocument::fromJson(httpGet(port, "/api/v2/alerts")).array();
}

inline QJsonArray alertmanagerSilences(int port)
{
    return QJsonDocument::fromJson(httpGet(port, "/api/v2/silences")).array();
}

// vmalert (VictoriaMetrics' rule evaluator, in Debian's victoria-metrics package) reading rulesFile against the server
// at datasourcePort, every evalInterval, sending what fires to Alertmanager at notifierPort; its own API on port.
inline bool startVmalert(ProcessGuard *guard, const QString &rulesFile, int datasourcePort, int notifierPort, int port,
    const QString &evalInterval = QStringLiteral("1s"))
{
    guard->process.setProcessChannelMode(QProcess::MergedChannels);
    guard->process.start(QStandardPaths::findExecutable(QStringLiteral("vmalert")),
        { QStringLiteral("-rule=") + rulesFile,
            QStringLiteral("-datasource.url=http://127.0.0.1:%1").arg(datasourcePort),
            QStringLiteral("-notifier.url=http://127.0.0.1:%1").arg(notifierPort),
            QStringLiteral("-httpListenAddr=127.0.0.1:%1").arg(port),
            QStringLiteral("-evaluationInterval=") + evalInterval, QStringLiteral("-loggerLevel=WARN") });
    return guard->process.waitForStarted(10000);
}

} // namespace fleetscope::testing
