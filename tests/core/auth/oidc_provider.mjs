// A real OpenID Provider for the tests (panva's certified `oidc-provider`),
// served on loopback. Its configuration comes as JSON in OIDC_TEST_CONFIG:
// {port, client: {client_id, client_secret, redirect_uris}, accounts: {sub:
// {email, email_verified, name}}}. Sign-in uses the package's own development
// interaction pages, whose login is the account's subject (which differs from
// its e-mail on purpose) and take any password; an unlisted login gets no
// claims. A line "ready <issuer>" on stdout says it listens.
import Provider from "oidc-provider";

const config = JSON.parse(process.env.OIDC_TEST_CONFIG);
const issuer = `http://127.0.0.1:${config.port}`;

const provider = new Provider(issuer, {
  clients: [{
    ...config.client,
    grant_types: ["authorization_code"],
    response_types: ["code"],
    token_endpoint_auth_method: "client_secret_basic",
  }],
  async findAccount(ctx, sub) {
    const account = config.accounts[sub];
    if (!account) return undefined;
    return {
      accountId: sub,
      async claims() {
        return { sub, email: account.email, email_verified: account.email_verified, name: account.name };
      },
    };
  },
  claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
  // The ID token carries the claims asked for by scope, as Entra ID and Google do.
  conformIdTokenClaims: false,
  cookies: { keys: ["tests-only-cookie-key"] },
  features: { devInteractions: { enabled: true } },
  pkce: { required: () => true },
  ttl: { Session: 60, Interaction: 600, Grant: 600, AccessToken: 600, IdToken: 600,
         AuthorizationCode: 60 },
});
provider.on("server_error", (ctx, err) => console.error("server_error", err));

provider.listen(config.port, "127.0.0.1", () => {
  console.log(`ready ${issuer}`);
});
