// The server's PKI and built-in credentials, created on first start and reused
// afterwards: a CA, a serving certificate signed by it, an admin client
// certificate, and a kube-apiserver style static token file holding an admin
// and a read-only token. docs/security.md lists the files.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/status.h"

namespace flotilla::apiserver {

inline constexpr std::string_view kAdminUser = "flotilla-admin";
inline constexpr std::string_view kViewerUser = "flotilla-viewer";
// The identity the federation's controllers run as (rbac_bootstrap.h binds
// it to the flotilla:federation-controller ClusterRole).
inline constexpr std::string_view kControllerUser = "system:flotilla:federation-controller";
// The identity agents' registrations write as (federation/cluster/
// registration.h): it alone may create ClusterRoleBindings, which the
// controllers may not, and only the server holds its token.
inline constexpr std::string_view kRegistrarUser = "system:flotilla:agent-registrar";

struct PkiOptions {
  std::string dir;                       // e.g. <data-dir>/pki, created 0700 if missing
  std::vector<std::string> hosts;        // extra SANs (DNS names or IPs) for the serving cert;
                                         // localhost, 127.0.0.1 and ::1 are always included
  std::string common_name = "flotilla";  // serving cert CN; CA is "<cn>-ca@<unix time>"
  Clock* clock = nullptr;                // validity periods; nullptr means RealClock()
};

struct Pki {
  std::string ca_cert_pem, ca_cert_path;
  std::string serving_cert_path, serving_key_path;  // for the TLS server
  std::string admin_cert_pem, admin_key_pem;  // client cert CN=flotilla-admin, O=system:masters
  std::string admin_token, readonly_token;    // 64 hex digits (32 random bytes)
  std::string controller_token;               // user kControllerUser, no group
  std::string registrar_token;                // user kRegistrarUser, no group
  std::string service_account_key_pem;        // signs service account tokens (sa_token.h)
  std::string token_file_path;                // static token CSV: token,user,uid,"groups"
  std::string ca_key_path;                    // so members and joins can issue more certs
};

// First start: creates the CA (EC P-256, 10 years), a serving certificate
// signed by it for the SANs (1 year), an admin client certificate (1 year),
// the two tokens and the token file (admin token -> user "flotilla-admin",
// group "system:masters"; read-only token -> user "flotilla-viewer", group
// "flotilla:viewers"; controller token -> user kControllerUser; registrar
// token -> user kRegistrarUser), and the
// service account signing key (EC P-256). Later starts reuse all of it. A leaf certificate is
// re-issued when it is missing, unreadable, not signed by the CA, expires
// within 30 days or (serving certificate) its SANs differ from the requested
// ones. A token row missing from the token file is re-added; other rows are
// left alone. Private keys and the token file are mode 0600.
// Errors: a CA certificate without its key (or the reverse) is an error
// rather than a silent new CA, since every issued credential would break.
StatusOr<Pki> EnsurePki(const PkiOptions& opts);

// Issues a client certificate (1 year) for `user` with `groups` as O
// entries, signed by the CA in `pki` (read from pki.ca_key_path). Returns
// {cert PEM, key PEM}. REQUIRES: `user` is not empty.
StatusOr<std::pair<std::string, std::string>> IssueClientCert(
    const Pki& pki, std::string_view user, const std::vector<std::string>& groups,
    Clock& clock = RealClock());

}  // namespace flotilla::apiserver
