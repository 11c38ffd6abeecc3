import { useState } from "preact/hooks";
import { api, must, type Problem } from "../api/client";
import { Field, fieldError } from "../components/Field";
import { ProblemNotice } from "../components/ProblemNotice";
import { t, type Key } from "../i18n";
import { go, path } from "../router";
import { account, refreshAccount } from "../session";

const PASSWORD_MIN = 15;
const PASSWORD_MAX = 128;

/** Where to go once logged in: the page that sent the customer here (?next=), else the orders. */
function next(): string {
  return new URLSearchParams(path.value.split("?")[1] ?? "").get("next") ?? "/orders";
}

async function logIn(email: string, password: string): Promise<void> {
  await must(api.POST("/api/v1/sessions", { body: { email, password } }));
  await refreshAccount();
  go(next());
}

type Input = { name: string; label: Key; type: "text" | "email" | "password"; autocomplete: string };

function TextField({ input, value, set, problem, hint }: { input: Input; value: string; set: (v: string) => void; problem: Problem | null; hint?: string }) {
  return (
    <Field id={input.name} label={t(input.label)} hint={hint} error={fieldError(problem, input.name)}>
      {(d, invalid) => (
        <input
          id={input.name}
          name={input.name}
          type={input.type as "text"}
          autocomplete={input.autocomplete}
          value={value}
          aria-describedby={d}
          aria-invalid={invalid}
          onInput={(e) => set(e.currentTarget.value)}
          required
        />
      )}
    </Field>
  );
}

export function Register() {
  const [values, setValues] = useState({ first_name: "", last_name: "", email: "", password: "" });
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  const set = (name: keyof typeof values) => (value: string) => setValues({ ...values, [name]: value });
  const length = [...values.password].length;
  const passwordProblem =
    length > 0 && (length < PASSWORD_MIN || length > PASSWORD_MAX)
      ? ({ ...emptyProblem, errors: [{ field: "password", message: t("password.rule") }] } as Problem)
      : null;

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      await must(api.POST("/api/v1/accounts", { body: values }));
      await logIn(values.email, values.password);
    } catch (p) {
      setProblem(p as Problem);
    } finally {
      setBusy(false);
    }
  };
  const inputs: Input[] = [
    { name: "first_name", label: "field.first_name", type: "text", autocomplete: "given-name" },
    { name: "last_name", label: "field.last_name", type: "text", autocomplete: "family-name" },
    { name: "email", label: "field.email", type: "email", autocomplete: "email" },
  ];
  return (
    <section class="narrow card" aria-labelledby="register-title">
      <h1 id="register-title">{t("register.title")}</h1>
      <form onSubmit={submit} noValidate>
        {inputs.map((input) => (
          <TextField key={input.name} input={input} value={values[input.name as keyof typeof values]} set={set(input.name as keyof typeof values)} problem={problem} />
        ))}
        <TextField
          input={{ name: "password", label: "field.password", type: "password", autocomplete: "new-password" }}
          value={values.password}
          set={set("password")}
          problem={passwordProblem ?? problem}
          hint={`${t("password.rule")} ${t("password.count", { n: length })}`}
        />
        <ProblemNotice problem={problem} />
        <button type="submit" class="primary" disabled={busy || passwordProblem !== null}>
          {t("register.submit")}
        </button>
      </form>
      <p>
        <a href={`#/login?next=${encodeURIComponent(next())}`}>{t("register.haveAccount")}</a>
      </p>
    </section>
  );
}

const emptyProblem = { type: "about:blank", title: "", status: 422, detail: "", code: "validation_error", errors: [] };

export function Login() {
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      await logIn(email, password);
    } catch (p) {
      setProblem(p as Problem);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="narrow card" aria-labelledby="login-title">
      <h1 id="login-title">{t("login.title")}</h1>
      <form onSubmit={submit} noValidate>
        <TextField input={{ name: "email", label: "field.email", type: "email", autocomplete: "username" }} value={email} set={setEmail} problem={problem} />
        <TextField
          input={{ name: "password", label: "field.password", type: "password", autocomplete: "current-password" }}
          value={password}
          set={setPassword}
          problem={problem}
        />
        <ProblemNotice problem={problem} />
        <button type="submit" class="primary" disabled={busy}>
          {t("login.submit")}
        </button>
      </form>
      <p class="notice" data-testid="no-reset">{t("login.noReset")}</p>
      <p>
        <a href={`#/register?next=${encodeURIComponent(next())}`}>{t("login.noAccount")}</a>
      </p>
    </section>
  );
}

export function Logout() {
  const [done, setDone] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const logOut = async () => {
    try {
      await must(api.DELETE("/api/v1/sessions/current"));
      account.value = null;
      setDone(true);
    } catch (p) {
      setProblem(p as Problem);
    }
  };
  return (
    <section class="narrow card" aria-labelledby="logout-title">
      <h1 id="logout-title">{t("logout.title")}</h1>
      {done ? (
        <p role="status">{t("logout.done")}</p>
      ) : (
        <>
          <p class="notice">{t("logout.advice")}</p>
          <ProblemNotice problem={problem} />
          <button type="button" class="primary" onClick={logOut}>
            {t("logout.confirm")}
          </button>
        </>
      )}
    </section>
  );
}
