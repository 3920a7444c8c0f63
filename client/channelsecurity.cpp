// SPDX-License-Identifier: Apache-2.0
#include "client/channelsecurity.h"

#include "client/grpcstatus.h"
#include "client/wiretext.h"

#include <QFile>

#include <grpcpp/grpcpp.h>
#include <grpcpp/security/credentials.h>

namespace fleetscope {

namespace {
constexpr qint64 maxFileBytes = 1 << 20;

bool readFile(const QString &path, const char *what, std::string *out, QString *error)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly) || file.size() > maxFileBytes) {
        *error = QStringLiteral("cannot read the %1 '%2'").arg(QLatin1String(what), path);
        return false;
    }
    const QByteArray bytes = file.readAll();
    out->assign(bytes.constData(), static_cast<size_t>(bytes.size()));
    return true;
}

// The first word of the first line of the file that is neither blank nor a comment; empty when there is none. A line
// copied whole from the backend's token file ("TOKEN NAME ROLE") sends its token alone.
QByteArray tokenIn(const QByteArray &text)
{
    for (const QByteArray &line : text.split('\n')) {
        const QByteArray trimmed = line.simplified();
        if (!trimmed.isEmpty() && !trimmed.startsWith('#')) {
            const qsizetype space = trimmed.indexOf(' ');
            return space < 0 ? trimmed : trimmed.left(space);
        }
    }
    return {};
}

// Sends the token of a file with each call, read again each time so that a rotated token is used at once. Runs on
// gRPC's own threads (blocking plugin).
class TokenFilePlugin final : public grpc::MetadataCredentialsPlugin
{
public:
    explicit TokenFilePlugin(QString path)
        : m_path(std::move(path))
    { }

    const char *GetType() const override { return "fleetscope-token-file"; }

    grpc::Status GetMetadata(grpc::string_ref /*serviceUrl*/, grpc::string_ref /*methodName*/,
        const grpc::AuthContext & /*channelAuthContext*/, std::multimap<grpc::string, grpc::string> *metadata) override
    {
        QFile file(m_path);
        if (!file.open(QIODevice::ReadOnly) || file.size() > maxFileBytes) {
            return { grpc::StatusCode::UNAUTHENTICATED, "cannot read the token file " + m_path.toStdString() };
        }
        const QByteArray token = tokenIn(file.readAll());
        if (token.isEmpty()) {
            return { grpc::StatusCode::UNAUTHENTICATED, "the token file " + m_path.toStdString() + " holds no token" };
        }
        metadata->insert({ "authorization", "Bearer " + token.toStdString() });
        return grpc::Status::OK;
    }

private:
    QString m_path;
};
} // namespace

std::shared_ptr<grpc::Channel> createChannel(
    const std::string &address, const ChannelSecurity &security, const grpc::ChannelArguments &args, QString *error)
{
    if (!security.tls()) {
        return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
    }
    grpc::SslCredentialsOptions ssl;
    if (!security.caFile.isEmpty() && !readFile(security.caFile, "CA file (--ca)", &ssl.pem_root_certs, error)) {
        return nullptr;
    }
    if (security.certFile.isEmpty() != security.keyFile.isEmpty()) {
        *error = QStringLiteral("a client certificate needs its key: give both --cert and --key");
        return nullptr;
    }
    if (!security.certFile.isEmpty()
        && (!readFile(security.certFile, "certificate (--cert)", &ssl.pem_cert_chain, error)
            || !readFile(security.keyFile, "key (--key)", &ssl.pem_private_key, error))) {
        return nullptr;
    }
    std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::SslCredentials(ssl);
    if (!security.tokenFile.isEmpty()) {
        QFile token(security.tokenFile);
        if (!token.open(QIODevice::ReadOnly)) {
            *error = QStringLiteral("cannot read the token file '%1'").arg(security.tokenFile);
            return nullptr;
        }
        credentials = grpc::CompositeChannelCredentials(
            credentials, grpc::MetadataCredentialsFromPlugin(std::make_unique<TokenFilePlugin>(security.tokenFile)));
    }
    return grpc::CreateCustomChannel(address, credentials, args);
}

QString describeRefusal(const grpc::Status &status, const ChannelSecurity &security)
{
    const QString detail = wireText(status.error_message(), maxMessageText); // the backend's text, or gRPC's
    switch (status.error_code()) {
    case grpc::StatusCode::UNAUTHENTICATED:
        if (detail.contains(QLatin1String("certificate"))) {
            return QStringLiteral("no client certificate: %1").arg(detail);
        }
        if (detail.contains(QLatin1String("token file"))) {
            return QStringLiteral("no token: %1").arg(detail);
        }
        return security.tokenFile.isEmpty()
            ? QStringLiteral("no token: the backend needs one (--token-file, or File > Connect to backend)")
            : QStringLiteral("no token: %1").arg(detail);
    case grpc::StatusCode::PERMISSION_DENIED:
        return QStringLiteral("token refused by the backend (%1)").arg(security.tokenFile);
    case grpc::StatusCode::UNAVAILABLE:
        break;
    default:
        return {};
    }
    // gRPC's words for a failed handshake (its OpenSSL's), as of the grpc 1.51 Debian 12 ships; said for people with
    // what to check.
    if (detail.contains(QLatin1String("is not in peer certificate"))) {
        return QStringLiteral("hostname mismatch: the backend's certificate does not name the address connected to; "
                              "connect with a name it lists");
    }
    if (detail.contains(QLatin1String("certificate verify failed"))) {
        return security.caFile.isEmpty()
            ? QStringLiteral("certificate not trusted: the backend's certificate is not signed by a system CA (give "
                             "its CA with --ca) or has expired")
            : QStringLiteral("certificate not trusted: the backend's certificate is not signed by the CA in %1, or "
                             "has expired")
                  .arg(security.caFile);
    }
    if (detail.contains(QLatin1String("wrong version number"))) {
        return QStringLiteral("the backend does not speak TLS: it was started without --tls-cert, or drop --ca, "
                              "--cert and --token-file");
    }
    // Closed during the handshake (not a live stream's end, which says "Socket closed" too).
    if (detail.startsWith(QLatin1String("failed to connect")) && detail.contains(QLatin1String("Socket closed"))) {
        if (!security.tls()) {
            return QStringLiteral("the backend closed the connection at once: it may need TLS (--ca and "
                                  "--token-file)");
        }
        if (!security.certFile.isEmpty()) {
            return QStringLiteral("client certificate refused: the backend does not trust %1 (not from its client "
                                  "CA?)")
                .arg(security.certFile);
        }
    }
    return {};
}

QString describeCall(const grpc::Status &status, const ChannelSecurity &security)
{
    const QString refusal = describeRefusal(status, security);
    return refusal.isEmpty() ? describeStatus(status) : refusal;
}

} // namespace fleetscope
