"""Bahasa Indonesia (Indonesian)."""

MESSAGES = {
    # Events
    "order_created": "Pesanan {order_id} tercatat: {model}, lot: {lots}, {gpus} GPU, {days} hari, {total}. Bayar di sini: {url}",
    "order_news": "Pesanan {order_id}: {news}\n{url}",
    "news": "{news}\n{url}",
    "payment_instructions": "Pembayaran untuk {subject}: kirim tepat {amount} {asset} di jaringan {network} sebelum {deadline} ({amount_usd}). Alamat dan kode QR ada di halaman: {url}",
    "payment_instructions_topup": "Isi saldo {amount_usd}: kirim tepat {amount} {asset} di jaringan {network} sebelum {deadline}. Alamat dan kode QR ada di halaman: {url}",
    "payment_news": "Pembayaran untuk {subject}: {status} {url}",
    "balance_credited": "{amount} dikreditkan ke saldo Anda: {reason}. {url}",
    "balance_credited_topup": "Isi saldo dikonfirmasi: {amount} dikreditkan ke saldo Anda. {url}",
    "balance_debited": "{amount} dibayar dari saldo Anda untuk {subject}. {url}",
    # What a payment is for
    "subject_order": "pesanan {order_id}",
    "subject_extension": "perpanjangan pesanan {order_id}",
    "subject_topup": "isi saldo Anda",
    # Answers to commands
    "help": 'Notifikasi Kernodeck.\n/status: pesanan Anda yang masih terbuka\n/language: en, vi atau id\n/unlink: hentikan pesan di obrolan ini\n/help: bantuan ini\nUntuk menautkan obrolan, buka halaman akun Anda di Kernodeck dan tekan "{link_button}".',
    "linked": "Obrolan ini tertaut ke akun Kernodeck Anda. Anda akan menerima pesan di sini untuk setiap perubahan pada pesanan, pembayaran, dan isi saldo Anda. /help",
    "already_linked": "Obrolan ini sudah tertaut ke akun Kernodeck Anda.",
    "link_used": "Maaf, tautan ini sudah digunakan. Buka halaman akun Anda di Kernodeck untuk mendapatkan tautan baru.",
    "link_expired": "Maaf, tautan ini sudah kedaluwarsa. Buka halaman akun Anda di Kernodeck untuk mendapatkan tautan baru.",
    "link_unknown": "Maaf, saya tidak mengenali tautan ini. Buka halaman akun Anda di Kernodeck untuk mendapatkan tautan baru.",
    "start_without_token": 'Halo! Untuk menerima notifikasi Kernodeck di sini, buka halaman akun Anda di Kernodeck dan tekan "{link_button}".',
    "not_linked": 'Obrolan ini belum tertaut ke akun Kernodeck. Buka halaman akun Anda di Kernodeck dan tekan "{link_button}".',
    "unlinked": "Tautan obrolan ini dilepas: obrolan ini tidak menerima pesan lagi. Tautkan lagi dari halaman akun Anda.",
    "unlinked_by_account": "Tautan obrolan ini dilepas dari halaman akun Kernodeck Anda: obrolan ini tidak menerima pesan lagi.",
    "status_header": "Pesanan Anda yang masih terbuka:",
    "status_line": "{order_id}: {status}\n{url}",
    "status_more": "… dan {count} lainnya.",
    "status_empty": "Anda tidak memiliki pesanan yang terbuka.",
    "language_set": "Mulai sekarang saya akan menulis dalam bahasa Indonesia.",
    "language_usage": "Pilih bahasa obrolan ini: /language en, /language vi atau /language id.",
}
