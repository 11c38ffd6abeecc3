import { useState } from "preact/hooks";
import { api, must, type Problem, type Schemas } from "../api/client";
import { More } from "../components/More";
import { ProblemNotice } from "../components/ProblemNotice";
import { dateTime, t, usd } from "../i18n";
import { usePaged } from "../paging";

export const describe = (s: Schemas["OrderSummary"]) =>
  `${s.lots} × ${s.model_name} · ${t("config.days", { n: s.duration_days })} · ${usd(s.total_usd)}`;

export function Orders() {
  const [problem, setProblem] = useState<Problem | null>(null);
  const list = usePaged((query) => must(api.GET("/api/v1/orders", { params: { query } })), setProblem);
  const orders = list.items;
  return (
    <section aria-labelledby="orders-title">
      <h1 id="orders-title">{t("orders.title")}</h1>
      <ProblemNotice problem={problem} />
      {orders?.length === 0 && <p>{t("orders.empty")}</p>}
      <ul class="list" data-testid="orders">
        {orders?.map((order) => (
          <li key={order.id} class="card row">
            <a href={`#/orders/${order.id}`}>
              {t("orders.open", { date: dateTime(order.created_at), summary: describe(order.summary) })}
            </a>
            <span class={`badge ${order.status}`}>{t(`status.${order.status}`)}</span>
          </li>
        ))}
      </ul>
      <More list={list} />
    </section>
  );
}
