// SPDX-License-Identifier: Apache-2.0
#include "app/embeddedbackend.h"

#include "jobs/background.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QLoggingCategory>
#include <QStandardPaths>
#include <QTimer>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <sys/prctl.h>
#include <sys/resource.h>

Q_LOGGING_CATEGORY(lcEmbedded, "fleetscope.embedded")

namespace fleetscope {

namespace {
constexpr int maxRestarts = 20;

QString backendProgram()
{
    // Beside the console first (build tree and installed bin/ alike), then on PATH.
    const QString besides = QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("fleetscope-backend"));
    if (QFileInfo(besides).isExecutable()) {
        return besides;
    }
    return QStandardPaths::findExecutable(QStringLiteral("fleetscope-backend"));
}
} // namespace

EmbeddedBackend::EmbeddedBackend(int gpus, quint64 seed, const QStringList &extraArguments, QObject *parent)
    : QObject(parent)
    , m_gpus(gpus)
    , m_seed(seed)
    , m_extraArguments(extraArguments)
{
    m_process.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    // In the child, before exec. The backend must not outlive the console, even when the console is killed outright.
    // The simulator stands in for a backend on another machine; here it shares the console's cores, and yields them to
    // the window as the console's own background threads do (jobs/background.h).
    m_process.setChildProcessModifier([] {
        ::prctl(PR_SET_PDEATHSIG, SIGTERM);
        errno = 0;
        const int nice = ::getpriority(PRIO_PROCESS, 0);
        if (errno == 0) {
            ::setpriority(PRIO_PROCESS, 0, std::min(19, nice + backgroundNice));
        }
    });
    connect(&m_process, &QProcess::readyReadStandardOutput, this, &EmbeddedBackend::onOutput);
    connect(&m_process, &QProcess::finished, this, &EmbeddedBackend::onFinished);
    connect(&m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart) {
            Q_EMIT failed(
                tr("cannot start the embedded backend %1: %2").arg(m_process.program(), m_process.errorString()));
        }
    });
}

EmbeddedBackend::~EmbeddedBackend()
{
    m_stopping = true;
    if (m_process.state() != QProcess::NotRunning) {
        m_process.terminate();
        if (!m_process.waitForFinished(3000)) {
            m_process.kill();
            m_process.waitForFinished(1000);
        }
    }
}

void EmbeddedBackend::start()
{
    launch();
}

void EmbeddedBackend::launch()
{
    const QString program = backendProgram();
    if (program.isEmpty()) {
        Q_EMIT failed(tr("fleetscope-backend was not found beside fleetscope or on PATH"));
        return;
    }
    // First start: let the kernel pick a free port. Restarts reuse it, so the client's address stays valid.
    const QString listen = m_address.isEmpty() ? QStringLiteral("127.0.0.1:0") : m_address;
    m_buffer.clear();
    m_process.start(program,
        // --no-config: the console's own fleet, never the installed service's settings (/etc/fleetscope/backend.yaml).
        QStringList { QStringLiteral("--no-config"), QStringLiteral("--listen"), listen, QStringLiteral("--gpus"),
            QString::number(m_gpus), QStringLiteral("--seed"), QString::number(m_seed) }
            + m_extraArguments);
}

void EmbeddedBackend::onOutput()
{
    m_buffer += m_process.readAllStandardOutput();
    qsizetype newline = 0;
    while ((newline = m_buffer.indexOf('\n')) >= 0) {
        const QString line = QString::fromUtf8(m_buffer.left(newline)).trimmed();
        m_buffer.remove(0, newline + 1);
        static const QString prefix = QStringLiteral("listening on ");
        if (line.startsWith(prefix)) {
            const bool first = m_address.isEmpty();
            m_address = line.mid(prefix.size());
            qCInfo(lcEmbedded, "embedded backend listening on %s", qPrintable(m_address));
            if (first) {
                Q_EMIT ready(m_address);
            }
        }
    }
}

void EmbeddedBackend::onFinished(int exitCode, QProcess::ExitStatus status)
{
    if (m_stopping) {
        return;
    }
    if (status == QProcess::NormalExit && exitCode == 2) {
        // It rejected its command line (its message went to stderr): restarting would not help.
        Q_EMIT failed(tr("the embedded backend rejected its options (%1); see the message on standard error")
                          .arg(m_extraArguments.join(QLatin1Char(' '))));
        return;
    }
    qCWarning(lcEmbedded, "embedded backend ended (%s, code %d)", status == QProcess::CrashExit ? "crashed" : "exited",
        exitCode);
    if (++m_restarts > maxRestarts) {
        Q_EMIT failed(tr("the embedded backend keeps failing; giving up after %1 restarts").arg(maxRestarts));
        return;
    }
    QTimer::singleShot(1000, this, &EmbeddedBackend::launch);
}

} // namespace fleetscope
