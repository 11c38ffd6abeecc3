import { useEffect, useState } from "preact/hooks";
import { api, must, type Problem } from "../api/client";
import { Field, fieldError } from "../components/Field";
import { ProblemNotice } from "../components/ProblemNotice";
import { language, t } from "../i18n";
import { account } from "../session";

export function Account() {
  return (
    <section aria-labelledby="account-title">
      <h1 id="account-title">{t("account.title")}</h1>
      {account.value && (
        <p>
          {account.value.first_name} {account.value.last_name} · {account.value.email}
        </p>
      )}
      <SshKey />
      <Telegram />
    </section>
  );
}

function SshKey() {
  const [key, setKey] = useState("");
  const [saved, setSaved] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  useEffect(() => {
    // The saved key, unless the customer has typed one meanwhile.
    must(api.GET("/api/v1/me/ssh-key")).then((k) => setKey((typed) => typed || (k.ssh_public_key ?? "")), setProblem);
  }, []);
  const save = async (event: Event) => {
    event.preventDefault();
    try {
      await must(api.PUT("/api/v1/me/ssh-key", { body: { ssh_public_key: key.trim() } }));
      setSaved(true);
      setProblem(null);
    } catch (p) {
      setSaved(false);
      setProblem(p as Problem);
    }
  };
  return (
    <form class="card" onSubmit={save} aria-labelledby="ssh-title" noValidate>
      <h2 id="ssh-title">{t("sshkey.title")}</h2>
      <Field id="account-ssh-key" label={t("config.sshKey")} hint={t("sshkey.help")} error={fieldError(problem, "ssh_public_key")}>
        {(d, invalid) => (
          <textarea id="account-ssh-key" rows={3} spellcheck={false} value={key} aria-describedby={d} aria-invalid={invalid} onInput={(e) => setKey(e.currentTarget.value)} />
        )}
      </Field>
      {saved && <p role="status">{t("sshkey.saved")}</p>}
      <ProblemNotice problem={problem && !problem.errors.length ? problem : null} />
      <button type="submit" class="primary">{t("common.save")}</button>
    </form>
  );
}

function Telegram() {
  const [url, setUrl] = useState<string | null>(null);
  const [unlinked, setUnlinked] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const link = async () => {
    try {
      setUrl((await must(api.POST("/api/v1/me/telegram-link", { body: { language: language.value } }))).url);
      setUnlinked(false);
      setProblem(null);
    } catch (p) {
      setProblem(p as Problem);
    }
  };
  const unlink = async () => {
    try {
      await must(api.DELETE("/api/v1/me/telegram-link"));
      setUrl(null);
      setUnlinked(true);
    } catch (p) {
      setProblem(p as Problem);
    }
  };
  return (
    <section class="card" aria-labelledby="telegram-title">
      <h2 id="telegram-title">{t("telegram.title")}</h2>
      <p>{t("telegram.intro")}</p>
      {url && (
        <p>
          <a href={url} target="_blank" rel="noopener noreferrer" data-testid="telegram-link">
            {t("telegram.open")}
          </a>
        </p>
      )}
      {unlinked && <p role="status">{t("telegram.unlinked")}</p>}
      <ProblemNotice problem={problem} />
      <button type="button" class="primary" onClick={link}>{t("telegram.link")}</button>{" "}
      <button type="button" onClick={unlink}>{t("telegram.unlink")}</button>
    </section>
  );
}
