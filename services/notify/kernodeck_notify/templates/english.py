"""English."""

MESSAGES = {
    # Events
    "order_created": {
        "count": "gpus",
        "one": "Order {order_id} is recorded: {model}, lots: {lots}, {gpus} GPU, {days} days, {total}. Pay it here: {url}",
        "other": "Order {order_id} is recorded: {model}, lots: {lots}, {gpus} GPUs, {days} days, {total}. Pay it here: {url}",
    },
    "order_news": "Order {order_id}: {news}\n{url}",
    "news": "{news}\n{url}",
    "payment_instructions": "Payment for {subject}: send exactly {amount} {asset} on the {network} network before {deadline} ({amount_usd}). The address and QR code are on the page: {url}",
    "payment_instructions_topup": "Top-up of {amount_usd}: send exactly {amount} {asset} on the {network} network before {deadline}. The address and QR code are on the page: {url}",
    "payment_news": "Payment for {subject}: {status} {url}",
    "balance_credited": "{amount} credited to your balance: {reason}. {url}",
    "balance_credited_topup": "Top-up confirmed: {amount} credited to your balance. {url}",
    "balance_debited": "{amount} paid from your balance for {subject}. {url}",
    # What a payment is for
    "subject_order": "order {order_id}",
    "subject_extension": "the extension of order {order_id}",
    "subject_topup": "your top-up",
    # Answers to commands
    "help": 'Kernodeck notifications.\n/status: your open orders\n/language: en, vi or id\n/unlink: no more messages in this chat\n/help: this help\nTo link a chat, open your account page on Kernodeck and press "{link_button}".',
    "linked": "This chat is linked to your Kernodeck account. You will get a message here for every change to your orders, payments and top-ups. /help",
    "already_linked": "This chat is already linked to your Kernodeck account.",
    "link_used": "Sorry, this link was already used. Open your account page on Kernodeck to get a new one.",
    "link_expired": "Sorry, this link has expired. Open your account page on Kernodeck to get a new one.",
    "link_unknown": "Sorry, I do not know this link. Open your account page on Kernodeck to get a new one.",
    "start_without_token": 'Hello! To get your Kernodeck notifications here, open your account page on Kernodeck and press "{link_button}".',
    "not_linked": 'This chat is not linked to a Kernodeck account. Open your account page on Kernodeck and press "{link_button}".',
    "unlinked": "This chat is unlinked: it gets no more messages. Link it again from your account page.",
    "unlinked_by_account": "This chat was unlinked from your Kernodeck account page: it gets no more messages.",
    "status_header": "Your open orders:",
    "status_line": "{order_id}: {status}\n{url}",
    "status_more": "… and {count} more.",
    "status_empty": "You have no open order.",
    "language_set": "I will write in English from now on.",
    "language_usage": "Choose the language of this chat: /language en, /language vi or /language id.",
}
