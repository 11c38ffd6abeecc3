import { render } from "preact";
import { LANGUAGES, language, setLanguage, t, type Language } from "./i18n";
import { Account } from "./pages/Account";
import { Login, Logout, Register } from "./pages/Auth";
import { Balance } from "./pages/Balance";
import { Configurator } from "./pages/Configurator";
import { OrderPage } from "./pages/Order";
import { Orders } from "./pages/Orders";
import { Resources } from "./pages/Resources";
import { Support } from "./pages/Support";
import { TopupPage } from "./pages/Topup";
import { match, path } from "./router";
import { account, refreshAccount } from "./session";

type Page = { pattern: string; view: (p: Record<string, string>) => preact.JSX.Element; private?: boolean };
const PAGES: Page[] = [
  { pattern: "/", view: () => <Configurator /> },
  { pattern: "/register", view: () => <Register /> },
  { pattern: "/login", view: () => <Login /> },
  { pattern: "/logout", view: () => <Logout /> },
  { pattern: "/orders", view: () => <Orders />, private: true },
  { pattern: "/orders/:id", view: ({ id }) => <OrderPage id={id} />, private: true },
  { pattern: "/balance", view: () => <Balance />, private: true },
  { pattern: "/topups/:id", view: ({ id }) => <TopupPage id={id} />, private: true },
  { pattern: "/account", view: () => <Account />, private: true },
  { pattern: "/support", view: () => <Support />, private: true },
  { pattern: "/resources", view: () => <Resources /> },
];

function Current() {
  for (const page of PAGES) {
    const params = match(page.pattern, path.value);
    if (!params) continue;
    if (page.private && account.value === undefined) return <p>{t("common.loading")}</p>;
    if (page.private && account.value === null) return <Login />;
    return page.view(params);
  }
  return <p>{t("error.not_found")}</p>;
}

function Header() {
  const links: [string, string][] = account.value
    ? [["/", t("nav.catalog")], ["/orders", t("nav.orders")], ["/balance", t("nav.balance")], ["/account", t("nav.account")], ["/support", t("nav.support")], ["/resources", t("nav.resources")], ["/logout", t("nav.logout")]]
    : [["/", t("nav.catalog")], ["/resources", t("nav.resources")], ["/login", t("nav.login")], ["/register", t("nav.register")]];
  return (
    <header>
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById("main")?.focus())}>
        {t("nav.skip")}
      </a>
      <a class="brand" href="#/">Kernodeck</a>
      <nav aria-label={t("nav.main")}>
        <ul>
          {links.map(([to, label]) => (
            <li key={to}>
              <a href={`#${to}`} aria-current={path.value.split("?")[0] === to ? "page" : undefined}>
                {label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <label class="language">
        <span>{t("nav.language")}</span>
        <select value={language.value} onChange={(e) => setLanguage(e.currentTarget.value as Language)}>
          {(Object.keys(LANGUAGES) as Language[]).map((l) => (
            <option key={l} value={l} lang={l}>
              {t(`lang.${l}`)}
            </option>
          ))}
        </select>
      </label>
    </header>
  );
}

function App() {
  return (
    <>
      <Header />
      <main id="main" tabIndex={-1}>
        <Current />
      </main>
    </>
  );
}

document.documentElement.lang = language.value;
refreshAccount();
render(<App />, document.getElementById("app")!);
